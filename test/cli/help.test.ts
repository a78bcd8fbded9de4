import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseCommandArgs } from '../../src/cli/args.ts';
import { commands } from '../../src/cli/commands.ts';
import { HELP_WIDTH } from '../../src/cli/help.ts';
import { commandOptions, type OptionSpec } from '../../src/cli/options.ts';
import { refsyncBin, runCli } from '../helpers/cli.ts';

// The commands of docs/contract.md, whose names users and scripts depend on.
const contractCommands = ['migrate', 'sync', 'worker', 'trigger', 'status', 'changes', 'check-auth', 'sandbox', 'demo'];

const widest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));

describe('refsync --help', () => {
  it('lists every command of the contract, within the help width', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    const listed = res.stdout
      .split('\n')
      .filter((l) => /^ {2}\S/.test(l))
      .map((l) => l.trim().split(/\s+/)[0]);
    for (const command of contractCommands) expect(listed).toContain(command);
    expect(listed).toEqual(commands.map((c) => c.name));
    expect(widest(res.stdout)).toBeLessThanOrEqual(HELP_WIDTH);
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

  it('names the command a misspelt one is closest to', async () => {
    const res = await runCli(['synk']);
    expect([res.code, res.stderr]).toEqual([2, "refsync: unknown command 'synk'; did you mean sync? (see 'refsync --help')\n"]);
    // Two letters are no slip of a three-letter command: no guess.
    expect((await runCli(['st'])).stderr).toBe("refsync: unknown command 'st' (see 'refsync --help')\n");
  });

  it('prints the version of package.json and the schema version it ships (its number of migrations, the last one)', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const journal = JSON.parse(readFileSync(new URL('../../migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: Array<{ tag: string }> };
    const schema = `schema version ${journal.entries.length}: ${journal.entries.at(-1)!.tag}`;
    for (const flag of ['--version', '-V']) {
      expect(await runCli([flag])).toMatchObject({ code: 0, stdout: `refsync ${version} (${schema})\n`, stderr: '' });
    }
  });
});

describe('refsync <command> --help', () => {
  it.each(commands.map((c) => [c.name]))('%s: exit 0, every option the parser takes and no other, within the help width', async (name) => {
    // No settings at all: help must not need a database, Redis or credentials.
    const res = await runCli([name, '--help'], { env: { REFSYNC_BASE_URL: 'not a url' } });
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(res.stdout).toMatch(new RegExp(`^usage: refsync ${name}\\b`));
    expect(widest(res.stdout)).toBeLessThanOrEqual(HELP_WIDTH);
    const documented = [...res.stdout.matchAll(/^\s+(?:-[a-z], )?--([a-z-]+)/gm)].map((m) => m[1]).sort();
    expect(documented).toEqual([...Object.keys(commandOptions[name]), 'help'].sort());
    expect((await runCli([name, '-h'])).stdout).toBe(res.stdout);
    expect((await runCli(['help', name])).stdout).toBe(res.stdout);
  });

  it('the parser accepts every option help shows, with a value where help names one', () => {
    for (const { name } of commands) {
      for (const [option, spec] of Object.entries(commandOptions[name])) {
        const argv = spec.type === 'string' ? [`--${option}`, 'x'] : [`--${option}`];
        expect(() => parseCommandArgs(name, argv, true), `${name} --${option}`).not.toThrow();
        // A one-letter alias help shows is parsed as the option.
        const short = (spec as OptionSpec).short;
        if (short) expect(parseCommandArgs(name, [`-${short}`, 'x'], true).values, `${name} -${short}`).toMatchObject({ [option]: 'x' });
      }
    }
  });
});
