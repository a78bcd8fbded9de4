// A small Postgres shared with other applications: a private cluster with
// max_connections = 10, 3 of them reserved for superusers, refsync as an ordinary role, and another
// application's role taking every slot left. A refused connection fails the list that needed it,
// never the run; the worker says so on /readyz and /metrics; nothing is lost once slots free.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import type { PageSource } from '../../src/sync/sync-target.ts';
import { triggerRuns } from '../../src/queue/trigger.ts';
import { captureLogs } from '../helpers/logs.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { runCli, startTestWorker, waitFor, workerConfig, testQueuePrefix } from '../queue/helpers.ts';
import { changeList, faultSource, fileLogs } from './harness.ts';
import { expectConsistentHistory, expectWholeStates, servedState } from './invariants.ts';
import { canStartPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from './servers.ts';

if (!canStartPrivatePostgres)
  console.warn('[tests] skipping test/faults/small-postgres.test.ts: needs root and /usr/lib/postgresql/15/bin to start a private Postgres');

let server: PrivatePostgres;
let sb: Sandbox;
/** A superuser session: it has the reserved slots to itself. */
let admin: pg.Client;
let appUrl: string;
const opened: Database[] = [];

function urlAs(user: string): string {
  const url = new URL(server.url);
  url.username = user;
  return url.toString();
}

beforeAll(async () => {
  if (!canStartPrivatePostgres) return;
  sb = await useSandbox();
  server = await startPrivatePostgres({ migrate: false, settings: { max_connections: 10, superuser_reserved_connections: 3 } });
  admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query('create role refsync_app login createrole');
  await admin.query('create role other_app login');
  await admin.query('alter database refsync owner to refsync_app');
  appUrl = urlAs('refsync_app');
  const db = await openDatabase({ url: appUrl, poolSize: 2 });
  await migrateDatabase(db);
  await db.close();
});
afterAll(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close().catch(() => undefined)));
  await admin?.end();
});

/**
 * Another application's sessions on every slot an ordinary role may still have; end() gives them
 * back. Every other session but the admin's and a run claim's (it holds an advisory lock) is ended
 * first: a pool of an earlier case closing an idle connection later would free a slot mid-case.
 */
async function takeEverySlot(): Promise<{ taken: number; end(): Promise<void> }> {
  await admin.query(
    // With a timeout, pg_terminate_backend returns once the session is gone and its slot free.
    `select pg_terminate_backend(pid, 10000) from pg_stat_activity
     where backend_type = 'client backend' and pid <> pg_backend_pid() and pid not in (select pid from pg_locks where locktype = 'advisory')`,
  );
  const clients: pg.Client[] = [];
  for (;;) {
    const client = new pg.Client({ connectionString: urlAs('other_app') });
    client.on('error', () => undefined);
    try {
      await client.connect();
      clients.push(client);
    } catch (err) {
      expect((err as { code?: string }).code).toBe('53300');
      return { taken: clients.length, end: () => Promise.all(clients.map((c) => c.end())).then(() => undefined) };
    }
  }
}

/** Ends refsync's sessions of `application` that hold no advisory lock (a run's claim holds one): its pool must connect again. */
async function dropPooledSessions(application: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    `select count(pg_terminate_backend(pid, 10000))::int as n from pg_stat_activity
     where application_name = $1 and pid not in (select pid from pg_locks where locktype = 'advisory')`,
    [application],
  );
  return rows[0]!.n;
}

async function snapshotsOf(environment: string) {
  const { rows } = await admin.query<{ list_key: string; status: string; error_code: string | null; error: string | null }>(
    // The admin session is on database refsync: the cluster's url names it.
    'select list_key, status, error_code, error from refdata.snapshots where environment = $1 order by id',
    [environment],
  );
  return rows;
}

describe.skipIf(!canStartPrivatePostgres)('a Postgres whose slots other applications take', () => {
  it('a sync: the list that finds no slot fails database_refused, the others are written, the run is closed partial; the next sync loses nothing', async () => {
    const db = await openDatabase({ url: appUrl, poolSize: 3, refusedWaitMs: 500, applicationName: 'refsync-small', logger: fileLogs.logger });
    opened.push(db);
    const fx = faultSource(sb, db);
    const environment = fx.source.environment;
    // piece_types is fetched only once the test has taken every slot.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated: PageSource = {
      async *pages(request) {
        if (request.path.includes('piece-types')) await gate;
        yield* fx.client.pages(request);
      },
    };
    const running = runSync({ db, sources: [fx.source], clientFor: () => gated, trigger: 'cli', logger: fileLogs.logger, concurrency: 2 });
    await waitFor(async () => (await snapshotsOf(environment)).filter((s) => s.status === 'ok').length === 2, 'the two other lists written');
    expect(await dropPooledSessions('refsync-small')).toBeGreaterThan(0);
    const slots = await takeEverySlot();
    expect(slots.taken).toBeGreaterThan(0);
    open();
    const [run] = await running;
    await slots.end();

    expect(run!.status).toBe('partial');
    const refused = fx.outcome(run!, 'piece_types');
    expect(refused.status).toBe('failed');
    expect(refused.errorCode).toBe('database_refused');
    expect(refused.error).toMatch(/connection limit \(max_connections\) is reached/);
    expect(refused.error).not.toMatch(/not reachable/);
    for (const key of ['shipment_modes', 'equipment_types'] as const) expect(fx.outcome(run!, key).status).toBe('changed');
    const { rows } = await admin.query('select status, finished_at is not null as finished, error from refdata.sync_runs where id = $1', [run!.runId]);
    expect(rows[0]).toMatchObject({ status: 'partial', finished: true, error: expect.stringMatching(/1 of 3 targets did not sync: .*connection limit/) });
    expect((await snapshotsOf(environment)).find((s) => s.list_key === 'piece_types')).toMatchObject({ status: 'failed', error_code: 'database_refused' });

    changeList(sb, 'shipment_modes');
    const again = await fx.sync();
    expect(again.status, again.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
    await expectWholeStates(db, fx.source, [fx.served()]);
    await expectConsistentHistory(db, fx.source);
  }, 120_000);

  it('refsync sync with every slot taken: one line naming the connection limit, exit 1, no run left running', async () => {
    const slots = await takeEverySlot();
    try {
      const environment = `small-cli-${process.pid}`;
      const env = sandboxEnv(sb, { DATABASE_URL: appUrl, REFSYNC_ENVIRONMENT: environment, REFSYNC_LISTS: 'shipment_modes' });
      const result = await runCli(['sync'], env, 120_000);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/Postgres refused a new connection: the server's connection limit \(max_connections\) is reached/);
      expect(result.stderr).not.toMatch(/not reachable|cannot reach/);
      const { rows } = await admin.query("select count(*)::int as n from refdata.sync_runs where environment = $1 and status = 'running'", [environment]);
      expect(rows[0].n).toBe(0);
    } finally {
      await slots.end();
    }
  }, 120_000);

  it('refsync worker started with every slot taken names the connection limit', async () => {
    const slots = await takeEverySlot();
    try {
      const result = await runCli(['worker'], sandboxEnv(sb, { DATABASE_URL: appUrl, REFSYNC_HTTP_PORT: '0' }), 120_000);
      expect(result.code, `${result.stdout}${result.stderr}`).not.toBe(0);
      expect(result.stderr, result.stdout).toMatch(/connection limit \(max_connections\) is reached/);
      expect(result.stderr).not.toMatch(/not reachable/);
    } finally {
      await slots.end();
    }
  }, 120_000);

  it('the worker: /readyz 503 and refsync_database_up 0 while every slot is taken, its gauges kept, failed attempts at warn; then it recovers and loses nothing', async () => {
    const logs = captureLogs('info');
    const environment = `small-worker-${process.pid}`;
    const config = workerConfig(sb, appUrl, { REFSYNC_ENVIRONMENT: environment, REFSYNC_LISTS: 'shipment_modes,equipment_types', REFSYNC_CONCURRENCY: '2' });
    const source = config.sources[0]!;
    const prefix = testQueuePrefix();
    const worker = await startTestWorker(config, prefix, { logger: logs.logger, policy: { attempts: 50, backoffMs: 500 } });
    const base = `http://127.0.0.1:${worker.http.port}`;
    const runStatus = async (slot: string) =>
      (await admin.query<{ status: string }>('select status from refdata.sync_runs where source = $1 and slot = $2', [source.name, slot])).rows[0]?.status;
    await triggerRuns(config, { prefix, slot: 'first' });
    expect(await waitFor(async () => (await runStatus('first')) === 'succeeded', 'the first run', 60_000)).toBe(true);
    const lastSuccess = /^refsync_last_success_timestamp_seconds\{[^}]*list="shipment_modes"[^}]*\} \S+$/m;
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(lastSuccess);

    await dropPooledSessions('refsync-worker');
    const slots = await takeEverySlot();
    try {
      // The last answer is reused for a second (one probe for a burst of callers), and a pooled
      // connection the server ended may fail one probe as unreachable first: wait for the refusal.
      const ready = await waitFor(async () => {
        const res = await fetch(`${base}/readyz`);
        const body = (await res.json()) as { checks: { postgres: string } };
        return res.status === 503 && /connection limit/.test(body.checks.postgres) && body;
      }, '/readyz to answer 503, naming the connection limit');
      expect(ready.checks.postgres).toBe("database refused a connection: the server's connection limit (max_connections) is reached");
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(/^refsync_database_up 0$/m);
      // The last values stay (rules on them still fire), with the time of the last read that worked.
      expect(metrics).toMatch(lastSuccess);
      expect(metrics).toMatch(/^refsync_database_read_timestamp_seconds \d/m);

      changeList(sb, 'shipment_modes');
      await triggerRuns(config, { prefix, slot: 'second' });
      const warned = await waitFor(
        () => logs.lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: string }).find((l) => l.msg === 'job will retry'),
        'a failed attempt logged',
        60_000,
      );
      expect(warned.level).toBe(40);
      expect(warned.err).toMatch(/connection limit/);
      expect(await runStatus('second')).not.toBe('succeeded');
    } finally {
      await slots.end();
    }
    expect(await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, '/readyz 200 again', 30_000)).toBe(true);
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/^refsync_database_up 1$/m);
    expect(await waitFor(async () => (await runStatus('second')) === 'succeeded', 'the second run, retried', 120_000)).toBe(true);
    const db = await openDatabase({ url: appUrl, poolSize: 1 });
    opened.push(db);
    await expectWholeStates(db, source, [servedState(sb, source)]);
    await expectConsistentHistory(db, source);
  }, 240_000);
});
