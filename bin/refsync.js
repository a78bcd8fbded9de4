#!/usr/bin/env node
// The V8 heap flags refsync syncs with (an old space of half the memory budget, a 2 MiB young
// generation) are set by the commands that sync lists themselves: they restart in place with them
// (src/memory/heap-flags.ts), so `npx refsync`, `node bin/refsync.js` and the image all get them.
// The CLI is TypeScript run directly by Node 24's type stripping: no build step stands between a
// checkout and a working command. `npm ci` brings Node 24 itself (the node-<platform> package of
// package.json's optionalDependencies, linked as node_modules/.bin/node, which npx and npm scripts
// put first on PATH). Older Node cannot load the CLI, so when we got one anyway, say why and what to do.
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  const root = new URL('../', import.meta.url);
  const platform = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
  // The Node binary packages among the optional dependencies (PGlite is one too, and is no runtime).
  const optional = Object.keys(JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).optionalDependencies ?? {});
  const bundled = optional.filter((name) => /^node-(?:linux|darwin|win)-/.test(name));
  let hint;
  if (!bundled.includes(platform)) {
    hint = `npm has no Node 24 package for ${process.platform}-${process.arch} (refsync brings one for ${bundled.map((p) => p.slice(5)).join(', ')}): install Node.js 24 yourself (see .nvmrc) and run again`;
  } else if (!existsSync(new URL(`node_modules/${platform}`, root))) {
    hint = `run \`npm ci\` (with optional dependencies) in ${root.pathname}: it installs Node 24 as ${platform}`;
  } else {
    hint = 'run it as `npx refsync ...` or `npm exec refsync`, which put the Node 24 in node_modules/.bin first on PATH';
  }
  process.stderr.write(`refsync: needs Node.js 24 or newer (this is ${process.version}); ${hint}\n`);
  process.exit(2);
}
// V8's compiled code of every module a command loads (refsync's, type-stripped, and its
// dependencies'), kept on disk between runs: a command starts 150-450 ms sooner on a 2-core machine
// (docs/performance.md, "The compile cache"). In the checkout's node_modules, which belongs to
// whoever ran `npm ci` and which the next install empties; never a shared /tmp another user could
// write first. Where it cannot be written (the image's read-only /app), Node goes on without it and
// says nothing. NODE_COMPILE_CACHE, when set, is used instead; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache(fileURLToPath(new URL('../node_modules/.cache/refsync-compile/', import.meta.url)));
// `refsync changes` ends with exit 0 on SIGINT or SIGTERM whenever they come: one that arrives while
// the command is still loading is held here, and honoured as soon as the command can stop cleanly
// (src/cli/feed/stop-signals.ts).
if (process.argv[2] === 'changes') {
  const early = { signal: null, handler: (signal) => (early.signal ??= signal) };
  process.on('SIGINT', early.handler);
  process.on('SIGTERM', early.handler);
  globalThis[Symbol.for('refsync.earlyStop')] = early;
}
await import('../src/cli/main.ts');
