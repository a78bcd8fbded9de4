// Temporary folders of the test file's own, removed after the file: the CLI's working folders,
// written config files, and what a sandbox writes into its folder (its CA's private key, its control
// secret) do not outlive the run on a machine that runs the suite again and again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];
// Registered when a file first imports this module, before its own hooks: with Vitest's stacked
// after-hooks it runs last, once the processes working in these folders have been stopped.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new folder in the system's temporary one, named `<prefix>-XXXXXX`, removed after the test file. */
export function testTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  made.push(dir);
  return dir;
}
