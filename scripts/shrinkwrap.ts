// The npm package carries the lockfile as npm-shrinkwrap.json: refsync is a command-line tool and a
// daemon, the case npm keeps the published lock for, so `npm install -g refsync`, a project that
// depends on it and the image all get the dependency versions CI ran, not whatever the ranges in
// package.json resolve to on the day. npm packs npm-shrinkwrap.json but never package-lock.json;
// the checkout keeps package-lock.json only (a shrinkwrap beside it would take over `npm install`),
// so prepack writes the copy and postpack removes it.
// Run: node scripts/shrinkwrap.ts write|remove
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const shrinkwrap = join(root, 'npm-shrinkwrap.json');

/** Writes package-lock.json as npm-shrinkwrap.json, once it is the lock of this package.json. */
export function writeShrinkwrap(): void {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };
  const text = readFileSync(join(root, 'package-lock.json'), 'utf8');
  const lock = JSON.parse(text) as { name: string; version: string };
  if (lock.name !== pkg.name || lock.version !== pkg.version) {
    throw new Error(`shrinkwrap: package-lock.json is for ${lock.name}@${lock.version}, package.json says ${pkg.name}@${pkg.version}; run npm install first`);
  }
  writeFileSync(shrinkwrap, text);
}

const mode = process.argv[2];
if (import.meta.main) {
  try {
    if (mode === 'write') writeShrinkwrap();
    else if (mode === 'remove') rmSync(shrinkwrap, { force: true });
    else throw new Error(`shrinkwrap: expected write or remove, got ${mode ?? 'nothing'}`);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
