// One process at a time on the embedded database, with real processes as a user starts them: two
// `refsync sync`s at once, a sync beside `refsync sql` holding the database in a long statement, `refsync
// status` beside a sync, and a owner killed with SIGKILL, which must not block the next command.
// Every change the upstream made is recorded once, and the next sync is green. Then the lock
// itself in this process: the socket-file kind used off Linux, and its stale file.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { getListDefinition } from '../../src/catalog/catalog.ts';
import { EmbeddedDatabaseBusyError, lockAddress, lockEmbeddedDatabase } from '../../src/db/embedded-lock.ts';
import { embeddedWaitMsFromEnv } from '../../src/config/embedded-wait.ts';
import { refsyncBin, runCli } from '../helpers/cli.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const LIST = 'shipment_modes';
const dir = testTempDir('refsync-lock');
let sb: Sandbox;
let env: Record<string, string>;
let added = 0;

beforeAll(async () => {
  sb = await useSandbox();
  env = sandboxEnv(sb, { REFSYNC_ENVIRONMENT: 'lock', REFSYNC_LISTS: LIST });
  const first = await runCli(['sync'], { env, cwd: dir, timeoutMs: 120_000 });
  expect(first.code, first.stderr).toBe(0);
}, 150_000);

/** A new code upstream; returns it. */
function addCode(): string {
  const list = getListDefinition(LIST);
  const entries = sb.control.getEntries(LIST) as Record<string, unknown>[];
  const entry: Record<string, unknown> = { ...entries[0]!, description: `added while locked ${++added}` };
  for (const field of list.keyFields) entry[field] = typeof entry[field] === 'number' ? 800_000 + added : `LCK${added}`;
  if ('id' in entry && !list.keyFields.includes('id')) entry.id = 800_000 + added;
  sb.control.addEntry(LIST, entry);
  return String(entry[list.keyFields[0]!]);
}

/** One statement's rows through `refsync sql --json` (itself a command that takes the lock). */
async function rows(sql: string): Promise<Array<Record<string, unknown>>> {
  const res = await runCli(['sql', '--json', sql], { env, cwd: dir, timeoutMs: 120_000 });
  expect(res.code, res.stderr).toBe(0);
  return (JSON.parse(res.stdout) as Array<{ rows: Array<Record<string, unknown>> }>)[0]!.rows;
}

/** Every change recorded for the codes, once each, and the next sync green. */
async function expectRecordedOnce(codes: string[]): Promise<void> {
  const found = await rows(
    `select code, count(*)::int as n from refdata.entry_changes where environment = 'lock' and list_key = '${LIST}' and change = 'added' and code in (${codes.map((c) => `'${c}'`).join(', ')}) group by code order by code`,
  );
  expect(found).toEqual(codes.toSorted().map((code) => ({ code, n: 1 })));
  const next = await runCli(['sync'], { env, cwd: dir, timeoutMs: 120_000 });
  expect(next.code, next.stderr).toBe(0);
  const inView = await rows(`select count(*)::int as n from refdata.${LIST} where code in (${codes.map((c) => `'${c}'`).join(', ')})`);
  expect(inView[0]!.n).toBe(codes.length);
}

/** Resolves once a command holds the lock: one that may not wait is refused, naming it. */
async function heldBy(command: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const probe = await runCli(['sql', 'select 1'], { env: { ...env, REFSYNC_EMBEDDED_WAIT_SECONDS: '0' }, cwd: dir });
    if (probe.code === 1 && probe.stderr.includes(`(${command})`)) return probe.stderr;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${command} never held the embedded database`);
}

describe('the embedded database, one process at a time', () => {
  it('two syncs at once: one waits for the other, each change is recorded once', async () => {
    const code = addCode();
    const [a, b] = await Promise.all([runCli(['sync'], { env, cwd: dir, timeoutMs: 120_000 }), runCli(['sync'], { env, cwd: dir, timeoutMs: 120_000 })]);
    expect([a.code, b.code], `${a.stderr}\n${b.stderr}`).toEqual([0, 0]);
    await expectRecordedOnce([code]);
  }, 300_000);

  it('a sync beside `refsync sql` in a long statement waits for it, saying whom it waits for, and loses nothing', async () => {
    const sql = runCli(['sql', 'select pg_sleep(6)'], { env, cwd: dir, timeoutMs: 120_000 });
    const refusal = await heldBy('refsync sql');
    expect(refusal.trim().split('\n')).toHaveLength(1);
    expect(refusal).toMatch(/^refsync: the embedded database \.\/\.refsync\/pgdata is in use by pid \d+ \(refsync sql\): one process at a time may open it/);
    const code = addCode();
    const sync = await runCli(['sync'], { env, cwd: dir, timeoutMs: 120_000 });
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).toMatch(/waiting for the embedded database \.\/\.refsync\/pgdata, held by pid \d+ \(refsync sql\)/);
    expect((await sql).code).toBe(0);
    await expectRecordedOnce([code]);
  }, 300_000);

  it('`refsync status` beside a sync: both answer, the sync records its change once', async () => {
    const code = addCode();
    const sync = runCli(['sync'], { env, cwd: dir, timeoutMs: 120_000 });
    await heldBy('refsync sync');
    const status = await runCli(['status'], { env, cwd: dir, timeoutMs: 120_000 });
    const synced = await sync;
    expect([synced.code, status.code], `${synced.stderr}\n${status.stderr}`).toEqual([0, 0]);
    expect(status.stdout).toContain(LIST);
    await expectRecordedOnce([code]);
  }, 300_000);

  it('a owner killed with SIGKILL does not block the next command', async () => {
    const owner = spawn(process.execPath, [refsyncBin, 'sql', 'select pg_sleep(600)'], { env: { PATH: process.env.PATH, ...env }, cwd: dir, stdio: 'ignore' });
    const ended = new Promise((resolve) => owner.on('close', resolve));
    await heldBy('refsync sql');
    owner.kill('SIGKILL');
    await ended;
    const code = addCode();
    const sync = await runCli(['sync'], { env: { ...env, REFSYNC_EMBEDDED_WAIT_SECONDS: '0' }, cwd: dir, timeoutMs: 120_000 });
    expect(sync.code, sync.stderr).toBe(0);
    await expectRecordedOnce([code]);
  }, 300_000);
});

describe('REFSYNC_EMBEDDED_WAIT_SECONDS', () => {
  it('is whole seconds; unset or empty waits as long as it takes; anything else is one line naming it', () => {
    expect(embeddedWaitMsFromEnv({})).toBeUndefined();
    expect(embeddedWaitMsFromEnv({ REFSYNC_EMBEDDED_WAIT_SECONDS: ' ' })).toBeUndefined();
    expect(embeddedWaitMsFromEnv({ REFSYNC_EMBEDDED_WAIT_SECONDS: '0' })).toBe(0);
    expect(embeddedWaitMsFromEnv({ REFSYNC_EMBEDDED_WAIT_SECONDS: '90' })).toBe(90_000);
    expect(() => embeddedWaitMsFromEnv({ REFSYNC_EMBEDDED_WAIT_SECONDS: '1.5' })).toThrow(
      "REFSYNC_EMBEDDED_WAIT_SECONDS: expected a whole number of seconds, got '1.5'",
    );
  });
});

describe('the lock as a socket file (off Linux)', () => {
  const folder = testTempDir('refsync-lockfile');

  it('refuses a second owner while the first holds it, and lets it in after', async () => {
    const first = await lockEmbeddedDatabase(folder, { abstract: false });
    const refused = await lockEmbeddedDatabase(folder, { abstract: false, waitMs: 0 }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(EmbeddedDatabaseBusyError);
    expect((refused as Error).message).toContain(`in use by pid ${process.pid}`);
    const notices: string[] = [];
    const second = lockEmbeddedDatabase(folder, { abstract: false, noticeAfterMs: 0, notice: (text) => notices.push(text) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await first.release();
    await (await second).release();
    expect(notices).toEqual([expect.stringMatching(new RegExp(`^waiting for the embedded database .*, held by pid ${process.pid} \\(`))]);
  });

  it('leaves nothing in the temporary folder once released: its owner file, and its socket file', async () => {
    // The abstract kind (Linux's) has no socket file, but writes the owner file too.
    for (const abstract of process.platform === 'linux' ? [false, true] : [false]) {
      const { address, ownerFile } = lockAddress(folder, abstract);
      const lock = await lockEmbeddedDatabase(folder, { abstract, waitMs: 0 });
      expect(existsSync(ownerFile)).toBe(true);
      await lock.release();
      expect([existsSync(ownerFile), !abstract && existsSync(address)]).toEqual([false, false]);
    }
  });

  it('takes over a socket file whose owner died', async () => {
    const { address } = lockAddress(folder, false);
    // A owner killed while it listens leaves its socket file, which nobody answers on.
    const owner = spawn(process.execPath, ['-e', "require('net').createServer().listen(process.argv[1], () => console.log('up'))", address], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise((resolve) => owner.stdout.once('data', resolve));
    const ended = new Promise((resolve) => owner.on('close', resolve));
    owner.kill('SIGKILL');
    await ended;
    expect(existsSync(address)).toBe(true);
    const lock = await lockEmbeddedDatabase(folder, { abstract: false, waitMs: 0 });
    await lock.release();
  });
});
