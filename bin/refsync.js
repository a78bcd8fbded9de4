#!/usr/bin/env node
// The CLI is TypeScript run directly by Node 24's type stripping: no build step stands between a
// checkout and a working command. Older Node cannot load it, so say that plainly first.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`refsync: needs Node.js 24 or newer (this is ${process.version}); see .nvmrc\n`);
  process.exit(2);
}
await import('../src/cli/main.ts');
