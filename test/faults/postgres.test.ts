// Postgres faults: connections killed, the server restarted or gone for
// a whole run, a table locked by another session. No crash, nothing partial, the next run heals.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { spawnCli } from '../queue/helpers.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { changeList, expectRerunAddsNothing, faultSource, fileLogs, SMALL_LISTS } from './harness.ts';
import { expectConsistentHistory, expectWholeStates, footprint } from './invariants.ts';
import { startPrivatePostgres, startTcpProxy } from './servers.ts';

const t = useTestDatabase();
let sb: Sandbox;
const opened: Database[] = [];

beforeAll(async () => {
  sb = await useSandbox();
});
afterAll(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close().catch(() => undefined)));
});

async function open(url: string, extra: Parameters<typeof openDatabase>[0] = {}): Promise<Database> {
  const db = await openDatabase({ url, poolSize: 4, logger: fileLogs.logger, applicationName: 'refsync-faults', ...extra });
  opened.push(db);
  return db;
}

async function runCount(db: Database, environment: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from refdata.sync_runs where environment = $1', [environment]);
  return rows[0]!.n;
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('7. connections terminated, server restarted', () => {
  it("pg_terminate_backend of the pool's idle connections: no crash, the next run succeeds", async () => {
    const db = await open(t.url);
    const fx = faultSource(sb, t.db);
    const first = await faultSource(sb, db, { REFSYNC_ENVIRONMENT: fx.source.environment }).sync();
    expect(first.status).toBe('succeeded');
    changeList(sb, 'shipment_modes');
    const after = fx.served();

    const admin = new pg.Client({ connectionString: t.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ n: number }>(
        `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and application_name = 'refsync-faults'`,
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    await settle(200);
    expect(fileLogs.text()).toMatch(/idle Postgres connection lost/);

    const run = await faultSource(sb, db, { REFSYNC_ENVIRONMENT: fx.source.environment }).sync();
    expect(run.status, run.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
    await expectWholeStates(t.db, fx.source, [after]);
    await expectConsistentHistory(t.db, fx.source);
  });

  it('a private Postgres restarted between runs: no crash, the next run succeeds', async () => {
    const server = await startPrivatePostgres();
    const db = await open(server.url);
    const fx = faultSource(sb, db);
    expect((await fx.sync()).status).toBe('succeeded');
    changeList(sb, 'equipment_types');
    const after = fx.served();

    await server.restart();
    await settle(200);
    const run = await fx.sync();
    expect(run.status, run.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
    await expectWholeStates(db, fx.source, [after]);
    await expectConsistentHistory(db, fx.source);
    await expectRerunAddsNothing(db, fx);
  });
});

describe('8. Postgres down for a whole run', () => {
  it('the run throws a connection error, writes nothing; once Postgres is back the next run succeeds', async () => {
    const proxy = await startTcpProxy(t.url);
    const db = await open(proxy.url, { poolSize: 4 });
    const fx = faultSource(sb, db);
    expect((await fx.sync()).status).toBe('succeeded');
    const before = fx.served();
    const footprintBefore = await footprint(t.db, fx.source.environment);
    const runsBefore = await runCount(t.db, fx.source.environment);
    changeList(sb, 'piece_types');
    const after = fx.served();

    await proxy.cut();
    await settle(100); // the pool drops the connections the cut killed
    const err = await fx.sync().then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(err, 'the run must fail while Postgres is unreachable').toBeDefined();
    expect(err!.code).toBe('ECONNREFUSED');
    expect(await footprint(t.db, fx.source.environment)).toEqual(footprintBefore);
    expect(await runCount(t.db, fx.source.environment)).toBe(runsBefore);
    await expectWholeStates(t.db, fx.source, [before]);

    await proxy.restore();
    const run = await fx.sync();
    expect(run.status, run.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
    await expectWholeStates(t.db, fx.source, [after]);
    await expectConsistentHistory(t.db, fx.source);
  });

  // Lost mid-run in a real process: `refsync sync` as a subprocess, through a proxy cut while its
  // lists are being fetched (each list holds a pooled connection meanwhile).
  async function interruptedCliRun() {
    const proxy = await startTcpProxy(t.url);
    const fx = faultSource(sb, t.db);
    expect((await fx.sync()).status).toBe('succeeded');
    const before = fx.served();
    changeList(sb, 'piece_types');
    changeList(sb, 'shipment_modes');
    const after = fx.served();
    const runsBefore = await runCount(t.db, fx.source.environment);
    sb.control.setLatency(400);
    const cli = spawnCli(['sync'], {
      ...sandboxEnv(sb, { REFSYNC_ENVIRONMENT: fx.source.environment, REFSYNC_LISTS: SMALL_LISTS, LOG_LEVEL: 'error' }),
      DATABASE_URL: proxy.url,
    });
    try {
      // A loaded machine can take seconds to start a node process: wait up to 60 s for the run record.
      for (let i = 0; i < 3000 && (await runCount(t.db, fx.source.environment)) === runsBefore; i++) await settle(20);
      expect(await runCount(t.db, fx.source.environment), 'the CLI run started').toBe(runsBefore + 1);
      await settle(100);
      await proxy.cut();
      const code = await cli.exited;
      return { fx, before, after, code, ...cli.output() };
    } finally {
      sb.control.setLatency(0);
    }
  }

  let interrupted: Awaited<ReturnType<typeof interruptedCliRun>> | undefined;

  it('Postgres lost in the middle of a run: nothing half-applied; once it is back the next run applies the whole new state', async () => {
    interrupted = await interruptedCliRun();
    const { fx, before, after, code } = interrupted;
    expect(code, 'the sync must not report success').not.toBe(0);
    await expectWholeStates(t.db, fx.source, [before, after]);
    const run = await fx.sync();
    expect(run.status, run.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
    await expectWholeStates(t.db, fx.source, [after]);
  }, 120_000);

  // A checked-out pg client has no pool 'error' listener: withConnection adds its own, or a
  // connection lost during a fetch would be an uncaught exception that ends the process.
  it('Postgres lost in the middle of a run: the process does not crash; it fails with one line', async () => {
    expect(interrupted, 'runs after the case above').toBeDefined();
    const { stderr } = interrupted!;
    expect(stderr).not.toMatch(/Node\.js v\d+|^\s+at /m);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  // When Postgres goes away mid-run, failRun cannot write either; the next run of the source
  // closes the record, since no live process holds that run's advisory lock any more.
  it('Postgres lost in the middle of a run: no run record is left running', async () => {
    expect(interrupted, 'runs after the cases above').toBeDefined();
    await expectConsistentHistory(t.db, interrupted!.fx.source);
  });
});

describe('9. a table locked by another session', () => {
  it('the lock timeout fires and rolls back; after the lock is released a retry succeeds; data intact', async () => {
    const db = await open(t.url, { lockTimeoutMs: 300 });
    const fx = faultSource(sb, db);
    expect((await fx.sync()).status).toBe('succeeded');
    const before = fx.served();
    const footprintBefore = await footprint(t.db, fx.source.environment);
    changeList(sb, 'equipment_types');
    const after = fx.served();

    const locker = new pg.Client({ connectionString: t.url });
    await locker.connect();
    let err: (Error & { code?: string }) | undefined;
    try {
      await locker.query('begin');
      await locker.query('lock table refdata.entries in access exclusive mode');
      err = await fx.sync().then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string },
      );
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
    expect(err, 'the sync must not wait for the lock forever nor succeed under it').toBeDefined();
    expect(err!.code).toBe('55P03'); // lock_not_available
    const { applied, entries, changes, alerts } = await footprint(t.db, fx.source.environment);
    expect({ applied, entries, changes, alerts }).toEqual({
      applied: footprintBefore.applied,
      entries: footprintBefore.entries,
      changes: footprintBefore.changes,
      alerts: footprintBefore.alerts,
    });
    await expectWholeStates(t.db, fx.source, [before]);

    const retry = await fx.sync();
    expect(retry.status).toBe('succeeded');
    await expectWholeStates(t.db, fx.source, [after]);
    await expectConsistentHistory(t.db, fx.source);
  });
});
