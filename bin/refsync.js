#!/usr/bin/env node
// The command, wherever refsync lives:
// - a checkout runs its TypeScript sources (src/) directly by Node 24's type stripping: no build step
//   stands between `npm ci` and a working command;
// - the npm package (and the image, which installs it) runs the same code compiled to JavaScript
//   (dist/, built by prepack): Node refuses to strip types under node_modules. The package ships no
//   src/, so a folder with src/cli/main.ts is a checkout, even when a `npm pack` left a dist/ in it.
// The V8 heap flags refsync syncs with (an old space of half the memory budget, a 2 MiB young
// generation) are set by the commands that sync lists themselves: they restart in place with them
// (src/memory/heap-flags.ts), so `npx refsync`, a global `refsync` and the image all get them.
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const fromSources = existsSync(new URL('src/cli/main.ts', root));
// The oldest Node each layout runs on: type stripping as refsync uses it needs 24; the compiled code
// needs what its dependencies need (undici 8: 22.19, OpenTelemetry 3: 22.15). package.json's
// `engines` says the same for the package.
const needs = fromSources ? [24, 0] : [22, 19];
const [major, minor] = process.versions.node.split('.').map(Number);
const platform = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;

if (major > needs[0] || (major === needs[0] && minor >= needs[1])) {
  // Set by relaunch() below against a loop; not a setting (refsync warns of unknown REFSYNC_ ones).
  delete process.env.REFSYNC_RELAUNCHED;
  if (process.argv[2] === 'changes') holdEarlyStopSignals();
  startCompileCache();
  await import(fromSources ? '../src/cli/main.ts' : '../dist/cli/main.js');
} else {
  // An older Node (the machine's own, say, running a global install): the package brings Node 24 as
  // an optional dependency (the node-<platform> package); run the same command on it.
  const node = process.env.REFSYNC_RELAUNCHED ? undefined : bundledNode();
  if (node) relaunch(node);
  else refuse();
}

/**
 * V8's compiled code of every module a command loads (refsync's and its dependencies'), kept on disk
 * between runs: a command starts 150-450 ms sooner on a 2-core machine (docs/performance.md, "The
 * compile cache"). In refsync's own node_modules, which belongs to whoever installed it; where that
 * cannot be written (a global install by root, the image's read-only /app), in the user's own cache
 * folder; never a shared /tmp another user could write first. Where neither can be written, Node
 * goes on without it and says nothing. NODE_COMPILE_CACHE, when set, is used instead;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
function startCompileCache() {
  const own = fileURLToPath(new URL('node_modules/.cache/refsync-compile/', root));
  const user = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'refsync', 'compile');
  // A folder another user made (root, installing) may exist already: Node would take it and fail
  // only as it writes, at exit, so ask first whether refsync's folder is ours to write.
  let ours = true;
  try {
    accessSync(fileURLToPath(root), constants.W_OK);
  } catch {
    ours = false;
  }
  if (ours && module.enableCompileCache(own).status !== module.constants.compileCacheStatus.FAILED) return;
  module.enableCompileCache(user);
}

/** The Node 24 binary of the node-<platform> optional dependency, where npm installed it. */
function bundledNode() {
  try {
    const manifest = createRequire(import.meta.url).resolve(`${platform}/package.json`);
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    const path = join(dirname(manifest), typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.node);
    return Number(pkg.version.split('.')[0]) >= 24 && existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs this command again on `node` and ends as it ends: its exit code, or the signal that ended it.
 * SIGTERM and SIGHUP sent to this process are passed on (a supervisor's stop reaches the worker,
 * which drains). Ctrl-C and Ctrl-\ at a terminal already reach the whole foreground process group,
 * the child included: like system(3), this process ignores them rather than deliver them twice (a
 * worker takes a second SIGINT as "stop now"). SIGKILL cannot be passed on: a supervisor that may
 * use it should stop the process group (systemd, Docker and timeout(1) do).
 */
function relaunch(node) {
  const child = spawn(node, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, REFSYNC_RELAUNCHED: '1' },
  });
  const posix = process.platform !== 'win32';
  for (const signal of posix ? ['SIGINT', 'SIGQUIT'] : ['SIGINT']) process.on(signal, () => {});
  for (const signal of posix ? ['SIGTERM', 'SIGHUP'] : ['SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    process.stderr.write(`refsync: cannot start the Node 24 that came with refsync (${node}): ${err.message}\n`);
    process.exit(2);
  });
  child.on('exit', (code, signal) => {
    if (code !== null) process.exit(code);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}

/** One line: why this Node cannot run refsync, and what to do that works for how it was installed. */
function refuse() {
  const wanted = `Node.js ${needs[0]}${needs[1] ? `.${needs[1]}` : ''} or newer`;
  // The Node binary packages among the optional dependencies (PGlite is one too, and is no runtime).
  const optional = Object.keys(JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).optionalDependencies ?? {});
  const bundled = optional.filter((name) => /^node-(?:linux|darwin|win)-/.test(name));
  let hint;
  if (!bundled.includes(platform)) {
    hint = `npm has no Node 24 package for ${process.platform}-${process.arch} (refsync brings one for ${bundled.map((p) => p.slice(5)).join(', ')}): install ${wanted} yourself and run again`;
  } else if (fromSources) {
    hint = `run \`npm ci\` (with optional dependencies) in ${fileURLToPath(root)}: it installs Node 24 as ${platform}`;
  } else {
    hint = `install ${wanted}, or install refsync again with its optional dependencies (\`npm install -g refsync\`, no --omit=optional), which bring Node 24 for ${process.platform}-${process.arch} and run on it`;
  }
  process.stderr.write(`refsync: needs ${wanted} (this is ${process.version}); ${hint}\n`);
  process.exit(2);
}

/**
 * `refsync changes` ends with exit 0 on SIGINT or SIGTERM whenever they come: one that arrives while
 * the command is still loading is held here, and honoured as soon as the command can stop cleanly
 * (src/cli/stop-signals.ts).
 */
function holdEarlyStopSignals() {
  const early = { signal: null, handler: (signal) => (early.signal ??= signal) };
  process.on('SIGINT', early.handler);
  process.on('SIGTERM', early.handler);
  globalThis[Symbol.for('refsync.earlyStop')] = early;
}
