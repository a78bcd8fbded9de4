// `refsync sql` as a user runs it: the examples of docs/data-teams.md ("Running SQL") against the
// embedded database a `refsync sync` wrote in a folder of the test's own (no DATABASE_URL), then
// against Postgres with DATABASE_URL, and the prompt in a real terminal (tmux): a statement over
// two lines, an error that leaves the prompt, `\q`.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { refsyncBin, runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { refsyncInPane } from '../helpers/tmux.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const t = useTestDatabase();
const guide = readFileSync(fileURLToPath(new URL('../../docs/data-teams.md', import.meta.url)), 'utf8');
const section = guide.slice(guide.indexOf('### Running SQL: `refsync sql`'), guide.indexOf('### Access: the `refdata_reader` role'));
const examples = /```sh\n([\s\S]*?)```/.exec(section)![1]!.trim().split('\n');

const dir = testTempDir('refsync-sql');
const bin = join(dir, 'bin');
let embeddedEnv: Record<string, string>;

beforeAll(async () => {
  // `refsync` on the PATH, as the docs write it.
  mkdirSync(bin);
  writeFileSync(join(bin, 'refsync'), `#!/bin/sh\nexec '${process.execPath}' '${refsyncBin}' "$@"\n`);
  chmodSync(join(bin, 'refsync'), 0o755);
  const sb = await useSandbox();
  embeddedEnv = sandboxEnv(sb, { REFSYNC_ENVIRONMENT: 'sql-cli', REFSYNC_LISTS: 'accessorials,hazmat,shipment_modes' });
  expect((await runCli(['sync'], { env: embeddedEnv, cwd: dir })).code).toBe(0);
  expect((await runCli(['sync'], { env: { ...embeddedEnv, DATABASE_URL: t.url } })).code).toBe(0);
});

/** One line of the docs run by a shell in the test's folder. */
function shell(line: string, env: Record<string, string>) {
  return spawnSync('sh', ['-c', line], { cwd: dir, env: { ...env, PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME ?? '' }, encoding: 'utf8' });
}

describe('refsync sql', () => {
  it('the guide has examples: one statement, several, --json and stdin', () => {
    expect(examples).toHaveLength(4);
  });

  it.each(examples.map((line) => [line]))('runs on the embedded database: %s', (line) => {
    const res = shell(line, embeddedEnv);
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    if (line.includes('--json')) expect(JSON.parse(res.stdout)[0].rows.map((r: { code: string }) => r.code)).toHaveLength(3);
    else expect(res.stdout).toMatch(/\(\d+ rows?\)\n$/);
  });

  it('shows each statement of several as its own table, from DATABASE_URL the same as from the embedded database', () => {
    const sql = "select list_key, entry_count from refdata.list_sync_times where environment = 'sql-cli' order by list_key; select 1 as one";
    const embedded = shell(`refsync sql "${sql}"`, embeddedEnv);
    const server = shell(`refsync sql "${sql}"`, { ...embeddedEnv, DATABASE_URL: t.url });
    expect(embedded.stdout).toBe(server.stdout);
    expect(server.stdout.split('\n\n')).toHaveLength(2);
    expect(server.stdout).toMatch(
      /^list_key +entry_count\n-+ +-+\naccessorials +\d+\nhazmat +\d+\nshipment_modes +10\n\(3 rows\)\n\none\n---\n1\n\(1 row\)\n$/,
    );
  });

  it('takes the SQL with -c or --command as psql does, and not twice', () => {
    for (const flag of ['-c', '--command']) {
      const res = shell(`refsync sql ${flag} "select 1 as one"`, embeddedEnv);
      expect([res.status, res.stdout, res.stderr]).toEqual([0, 'one\n---\n1\n(1 row)\n', '']);
    }
    const twice = shell('refsync sql -c "select 1" "select 2"', embeddedEnv);
    expect([twice.status, twice.stderr]).toEqual([2, 'refsync: sql: give the SQL once: as the argument or with -c, not both\n']);
  });

  it('a failing statement is one line on stderr, exit 1; no SQL is a usage error, exit 2', async () => {
    const failed = shell('refsync sql "select nope"', embeddedEnv);
    expect([failed.status, failed.stderr]).toEqual([1, 'refsync: sql: column "nope" does not exist\n']);
    const empty = shell('refsync sql < /dev/null', embeddedEnv);
    expect(empty.status).toBe(2);
    expect(empty.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('is read-only unless --write, on the embedded database and on DATABASE_URL alike', () => {
    for (const env of [embeddedEnv, { ...embeddedEnv, DATABASE_URL: t.url }]) {
      const refused = shell(`refsync sql "delete from refdata.entry_changes"`, env);
      expect([refused.status, refused.stderr]).toEqual([1, 'refsync: sql: cannot execute DELETE in a read-only transaction\n']);
      const written = shell(`refsync sql --write "create table public.written (a int); drop table public.written"`, env);
      expect([written.status, written.stderr]).toEqual([0, '']);
    }
  });

  it('on a terminal opens a prompt: a statement over two lines, an error that keeps the prompt, \\q', async () => {
    const { PATH: _path, ...env } = embeddedEnv;
    const pane = await refsyncInPane(['sql'], { columns: 120, env, cwd: dir });
    try {
      // The screen as tmux shows it, lines without their trailing blanks (the prompt's space too).
      const screenHas = async (text: string) => {
        await expect.poll(async () => (await pane.screen()).join('\n'), { timeout: 30_000 }).toContain(text);
      };
      await screenHas('refdata=>');
      expect((await pane.screen()).join('\n')).toContain('refsync sql on the embedded database in ./.refsync/pgdata, read-only (--write to change data).');
      await pane.type('select list_key, entry_count');
      await screenHas('refdata->');
      await pane.type("from refdata.list_sync_times where list_key = 'shipment_modes';");
      await screenHas('(1 row)');
      const screen = await pane.screen();
      const header = screen.findIndex((l) => /^list_key +entry_count$/.test(l));
      expect(screen.slice(header, header + 4)).toEqual(['list_key        entry_count', '--------------  -----------', 'shipment_modes  10', '(1 row)']);
      await pane.type('select nope;');
      await screenHas('ERROR: column "nope" does not exist');
      await pane.type('\\q');
      expect(await pane.exited()).toBe(0);
    } finally {
      await pane.close();
    }
  });

  it('the prompt keeps a transaction across statements, and says so when its connection is lost inside one', async () => {
    const serverEnv: Record<string, string> = { ...embeddedEnv, DATABASE_URL: t.url };
    const { PATH: _path, ...env } = serverEnv;
    await t.db.query('create table public.prompt_tx (a int)');
    const pane = await refsyncInPane(['sql', '--write'], { columns: 160, env, cwd: dir });
    try {
      const screenHas = async (text: string) => {
        await expect.poll(async () => (await pane.screen()).join('\n'), { timeout: 30_000 }).toContain(text);
      };
      await screenHas('changes allowed (--write)');
      await pane.type('begin;');
      await pane.type('insert into public.prompt_tx values (1);');
      await screenHas('1 row affected');
      await pane.type('rollback;');
      await expect.poll(async () => (await pane.screen()).includes('ok'), { timeout: 30_000 }).toBe(true);
      expect((await t.db.query<{ n: number }>('select count(*)::int as n from public.prompt_tx')).rows[0]!.n).toBe(0);

      await pane.type('begin;');
      await pane.type('insert into public.prompt_tx values (2);');
      // The prompt's one connection, idle inside the transaction it holds open.
      const holder = async () =>
        (
          await t.db.query<{ pid: number }>(
            "select pid from pg_stat_activity where datname = $1 and application_name = 'refsync-cli' and state = 'idle in transaction'",
            [t.name],
          )
        ).rows[0]?.pid;
      await expect.poll(holder, { timeout: 30_000 }).toBeTypeOf('number');
      await t.db.query('select pg_terminate_backend($1)', [await holder()]);
      await pane.type('insert into public.prompt_tx values (3);');
      await screenHas('lost inside a transaction');
      await pane.type('insert into public.prompt_tx values (4);');
      await screenHas('ERROR: the transaction was lost with its connection and nothing of it was committed; type ROLLBACK to go on');
      expect((await t.db.query<{ n: number }>('select count(*)::int as n from public.prompt_tx')).rows[0]!.n).toBe(0);
      await pane.type('rollback;');
      await pane.type('\\q');
      expect(await pane.exited()).toBe(0);
    } finally {
      await pane.close();
    }
  });
});
