#!/usr/bin/env -S node --max-semi-space-size=2
// --max-semi-space-size=2: on a machine with much memory V8 sizes the young generation up to
// 128 MiB, and a sync keeps that much short-lived garbage around. At 2 MiB a million-entry sync
// peaked at 288 MiB instead of 391 MiB, no slower (docs/performance.md). The flag cannot be set
// from inside the process; `node bin/refsync.js` (as the Dockerfile runs it) passes it itself.
// The CLI is TypeScript run directly by Node 24's type stripping: no build step stands between a
// checkout and a working command. Older Node cannot load it, so say that plainly first.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`refsync: needs Node.js 24 or newer (this is ${process.version}); see .nvmrc\n`);
  process.exit(2);
}
await import('../src/cli/main.ts');
