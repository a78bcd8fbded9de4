import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { refsyncBin, runCli } from '../helpers/cli.ts';

// The commands of CONTRACT.md, whose names users and scripts depend on.
const contractCommands = ['migrate', 'sync', 'worker', 'trigger', 'status', 'changes', 'check-auth', 'sandbox', 'demo'];

describe('refsync --help', () => {
  it('lists every command of the contract', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    const listed = res.stdout
      .split('\n')
      .filter((l) => l.startsWith('  '))
      .map((l) => l.trim().split(/\s+/)[0]);
    for (const command of contractCommands) expect(listed).toContain(command);
  });

  it('runs as an executable through its shebang, which passes V8 flags', async () => {
    // `npx refsync` and an installed `refsync` start here, not through `node bin/refsync.js`.
    const { stdout } = await promisify(execFile)(refsyncBin, ['--help']);
    expect(stdout).toMatch(/^usage: refsync <command>/);
  });

  it('refuses an unknown command with one line and exit 2', async () => {
    const res = await runCli(['frobnicate']);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("refsync: unknown command 'frobnicate' (see 'refsync --help')\n");
  });
});
