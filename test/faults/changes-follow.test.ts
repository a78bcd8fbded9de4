// `refsync changes --follow` as a long-running reader: woken by NOTIFY, stopped by a signal after
// the line in progress, and across a Postgres restart and an outage, every change printed once. On
// a private Postgres of this file's own: the shared server is restarted by nobody, and its feed is
// held by every other test file's open write transactions.
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { spawnCli, waitFor, type CliProcess } from '../queue/helpers.ts';
import { addShipmentMode, allPositions, consumerPosition, feedEnv, printedPositions, stopWith, syncList } from '../cli/feed-helpers.ts';
import { canStartPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from './servers.ts';

let sb: Sandbox;
let server: PrivatePostgres;
let db: Database;
let env: Record<string, string>;

beforeAll(async () => {
  if (!canStartPrivatePostgres) return;
  sb = await useSandbox();
  server = await startPrivatePostgres();
  db = await openDatabase({ url: server.url, poolSize: 2 });
  env = feedEnv(sb, server.url);
  await syncList(env, 'shipment_modes');
}, 180_000);
afterAll(async () => {
  await db?.close();
});

/** Starts following after everything there is now; resolves once its LISTEN session is up. */
async function follow(consumer: string): Promise<CliProcess & { from: string }> {
  const positions = await allPositions(db);
  const from = positions.at(-1) ?? '00000000000000000000-00000000000000000000';
  const proc = spawnCli(['changes', '--follow', '--consumer', consumer, '--after', from, '--json'], env);
  await waitFor(async () => (await listenSessions()) === 1, 'the LISTEN session', 60_000);
  return Object.assign(proc, { from });
}

async function listenSessions(): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where application_name = 'refsync-changes-listen' and query ilike 'listen%'`,
  );
  return rows[0]!.n;
}

/** One more change upstream, synced by `refsync sync`; its feed position. */
async function oneChange(): Promise<string> {
  const before = (await allPositions(db)).length;
  addShipmentMode(sb);
  await syncList(env, 'shipment_modes');
  const after = await allPositions(db);
  expect(after.length).toBe(before + 1);
  return after.at(-1)!;
}

const printed = (proc: CliProcess) => printedPositions(proc.output().stdout);

/** Whether the process has a handler for the signal (its bit in /proc's SigCgt mask). */
function catches(pid: number, signal: NodeJS.Signals): boolean {
  const mask = BigInt(`0x${/^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]}`);
  return ((mask >> BigInt(constants.signals[signal] - 1)) & 1n) === 1n;
}

describe.skipIf(!canStartPrivatePostgres)('refsync changes --follow', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`prints each change committed after it started (woken by NOTIFY); ${signal}: exit 0, the consumer's position not moved by reading`, async () => {
      const name = `follow-${signal}`;
      const proc = await follow(name);
      const changes = [await oneChange(), await oneChange()];
      await waitFor(() => printed(proc).length === 2, 'both changes to be printed', 60_000);
      // One connection LISTENs, the pool reads through one: two in all.
      const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where application_name like 'refsync-c%'`);
      expect(rows[0]!.n).toBeLessThanOrEqual(2);
      expect(await stopWith(proc, signal)).toBe(0);
      expect(printed(proc)).toEqual(changes);
      expect(proc.output().stderr).toBe('');
      // Printing commits nothing: the position moves by --commit or an --exec batch (docs/change-feed.md).
      expect(await consumerPosition(db, name)).toBe(proc.from);
    });
  }

  it('--follow alone starts at the end, as tail -f does: only what is served from then on', async () => {
    await oneChange();
    const proc = spawnCli(['changes', '--follow', '--json'], env);
    await waitFor(async () => (await listenSessions()) === 1, 'the LISTEN session', 60_000);
    const change = await oneChange();
    await waitFor(() => printed(proc).length === 1, 'the new change', 60_000);
    expect(await stopWith(proc, 'SIGTERM')).toBe(0);
    expect(printed(proc)).toEqual([change]);
  });

  it('a second signal, of either kind, ends a stop that waits on a database gone silent at once', async () => {
    for (const [first, second] of [
      ['SIGINT', 'SIGTERM'],
      ['SIGTERM', 'SIGINT'],
    ] as const) {
      const proc = await follow(`hung-stop-${first}`);
      // Its sessions stop answering (a frozen server, a partition): the stop's UNLISTEN, lease
      // release and disconnects then wait on them.
      const { rows } = await db.query<{ pid: number }>(`select pid from pg_stat_activity where application_name like 'refsync-c%'`);
      expect(rows.length).toBeGreaterThan(0);
      for (const { pid } of rows) process.kill(pid, 'SIGSTOP');
      try {
        proc.child.kill(first);
        // Once the first signal is taken, neither is caught any more: the next one is Node's default.
        const pid = proc.child.pid!;
        await waitFor(() => !catches(pid, 'SIGINT') && !catches(pid, 'SIGTERM'), 'the first signal to be taken', 30_000);
        expect(proc.child.exitCode).toBeNull();
        expect(await stopWith(proc, second)).toBeNull();
        expect(proc.child.signalCode).toBe(second);
      } finally {
        for (const { pid } of rows) process.kill(pid, 'SIGCONT');
      }
    }
  });

  it('keeps going across a restart and an outage: says so once per outage, every change printed once', async () => {
    const proc = await follow('across-restarts');
    const changes = [await oneChange()];
    await waitFor(() => printed(proc).length === 1, 'the first change', 60_000);

    await server.restart();
    changes.push(await oneChange());
    await waitFor(() => printed(proc).length === 2, 'the change written right after the restart', 60_000);

    await server.stop();
    await waitFor(() => /lost the database/.test(proc.output().stderr), 'the outage to be reported', 60_000);
    await server.start();
    changes.push(await oneChange(), await oneChange());
    await waitFor(() => printed(proc).length === 4, 'the changes written after the outage', 60_000);
    const count = (what: RegExp) => (proc.output().stderr.match(what) ?? []).length;
    await waitFor(() => count(/reconnected/g) === count(/lost the database/g), 'the recovery to be reported', 60_000);

    expect(await stopWith(proc, 'SIGTERM')).toBe(0);
    expect(printed(proc)).toEqual(changes);
    // Once per outage: the restart is seen only if a read met it (the pool replaces a connection
    // lost while idle without a word), the stop is.
    expect(count(/lost the database/g)).toBeGreaterThanOrEqual(1);
    expect(count(/lost the database/g)).toBeLessThanOrEqual(2);
    for (const line of proc.output().stderr.trimEnd().split('\n')) {
      expect(line).toMatch(/^refsync: changes: (lost the database \(.+\); reconnecting, to resume after|reconnected; resuming after) \d{20}-\d{20}$/);
    }
    expect(await consumerPosition(db, 'across-restarts')).toBe(proc.from);
  }, 240_000);
});
