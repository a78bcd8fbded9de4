// refsync through PgBouncer in transaction pooling mode, as managed Postgres services are often
// reached: no startup parameter beyond the basics, and no session state between transactions
// (timeouts, run claims, the migration lock and staging tables all live in one transaction).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { targetsFor } from '../../src/catalog/catalog.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { dropTestDatabase, useTestDatabase } from '../helpers/db.ts';
import { pgbouncerInstalled, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { runCli, spawnCli, startTestWorker, waitFor, workerConfig, testQueuePrefix } from '../queue/helpers.ts';
import { pipelineFixture } from '../sync/fixture.ts';

const installed = pgbouncerInstalled();
if (!installed && process.env.CI) throw new Error('pgbouncer is not installed (.ci/run installs the Debian package)');
if (!installed) console.warn('[tests] pgbouncer is not installed: skipping test/db/pooler.test.ts (apt-get install pgbouncer)');

const t = useTestDatabase();
let bouncer: PgBouncer;
let sb: Sandbox;
let pooled: Database;
/** The test database's URL through the bouncer. */
let url: string;

beforeAll(async () => {
  if (!installed) return;
  bouncer = await startPgBouncer(t.url);
  url = bouncer.urlFor(t.url);
  pooled = await openDatabase({ url, poolSize: 6, applicationName: 'refsync-test-pooled' });
  sb = await useSandbox();
});
afterAll(async () => {
  await pooled?.close();
  await bouncer?.stop();
});

async function runsOf(environment: string) {
  const { rows } = await t.db.query<{ id: number; status: string; error: string | null }>(
    'select id, status, error from refdata.sync_runs where environment = $1 order by id',
    [environment],
  );
  return rows;
}

async function snapshotsOf(runId: number) {
  const { rows } = await t.db.query<{ list_key: string; status: string; changed: boolean; modified: number }>(
    'select list_key, status, changed, modified from refdata.snapshots where run_id = $1 order by list_key',
    [runId],
  );
  return rows;
}

describe.skipIf(!installed)('through PgBouncer in transaction mode', () => {
  it('refsync migrate migrates an empty database, twice at once, through the bouncer', async () => {
    const name = `refsync_t_pool_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: inject('databaseServerUrl') });
    await admin.connect();
    try {
      await admin.query(`create database ${name}`);
      const target = new URL(t.url);
      target.pathname = `/${name}`;
      const env = { DATABASE_URL: bouncer.urlFor(target.toString()), LOG_LEVEL: 'warn' };
      const [a, b] = await Promise.all([runCli(['migrate'], env), runCli(['migrate'], env)]);
      expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
      const migrated = new pg.Client({ connectionString: target.toString() });
      await migrated.connect();
      try {
        const applied = await migrated.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
        const views = await migrated.query<{ n: number }>("select count(*)::int as n from information_schema.views where table_schema = 'refdata'");
        expect(applied.rows[0]?.n).toBe((await t.db.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0]?.n);
        expect(views.rows[0]?.n).toBeGreaterThan(1);
      } finally {
        await migrated.end();
      }
    } finally {
      await admin.end();
      await dropTestDatabase(name);
    }
  });

  it('refsync sync: a first sync, an unchanged resync and a changed resync', async () => {
    const env = { ...sandboxEnv(sb, { REFSYNC_ENVIRONMENT: 'pooled-cli' }), DATABASE_URL: url };
    const first = await runCli(['sync'], env, 60_000);
    expect(first.code, first.stderr).toBe(0);
    const again = await runCli(['sync'], env, 60_000);
    expect(again.code, again.stderr).toBe(0);
    sb.control.modifyEntry('equipment_types', 'REEFER', { name: 'Reefer, through the pooler' });
    const changed = await runCli(['sync'], env, 60_000);
    expect(changed.code, changed.stderr).toBe(0);

    const runs = await runsOf('pooled-cli');
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const targets = targetsFor(pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'pooled-cli' }).source).length;
    const [s1, s2, s3] = await Promise.all(runs.map((r) => snapshotsOf(r.id)));
    expect(s1!.filter((s) => s.status === 'ok' && s.changed)).toHaveLength(targets);
    expect(s2!.filter((s) => s.status === 'ok' && !s.changed)).toHaveLength(targets);
    expect(s3!.filter((s) => s.changed).map((s) => [s.list_key, s.modified])).toEqual([['equipment_types', 1]]);
    const { rows } = await t.db.query<{ name: string }>(
      "select payload->>'name' as name from refdata.equipment_types where environment = 'pooled-cli' and entry_key = 'REEFER'",
    );
    expect(rows).toEqual([{ name: 'Reefer, through the pooler' }]);
  });

  it('two syncs of one large target at once, rows staged while fetching: the change commits once, both runs succeed', async () => {
    sb.control.setGenerated('nmfc_codes', 3000);
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'pooled-large', REFSYNC_LISTS: 'nmfc_codes' });
    expect((await fx.sync(pooled)).status).toBe('succeeded');
    sb.control.changeGenerated('nmfc_codes', { everyNth: 1 });
    const [target] = targetsFor(fx.source);
    // A low spill threshold stages rows (by COPY) while the list is still fetched, in the
    // transaction the apply then runs in: through the bouncer a session temp table would be lost.
    const once = () => syncTarget(pooled, fx.client, target!, { runId: null, tuning: { spillThreshold: 1000 } });
    const outcomes = await Promise.all([once(), once(), once()]);
    expect(outcomes.map((o) => o.error ?? o.status).sort()).toEqual(['changed', 'unchanged', 'unchanged']);
    expect(outcomes.find((o) => o.status === 'changed')!.counts.modified).toBe(3000);
    const { rows } = await t.db.query<{ n: number }>(
      "select count(*)::int as n from refdata.entry_changes where environment = 'pooled-large' and change = 'modified'",
    );
    expect(rows[0]?.n).toBe(3000);
    await fx.client.close();
  });

  it('refsync worker + trigger: the run is recorded and closed through the bouncer', async () => {
    const prefix = testQueuePrefix();
    const extra = { REFSYNC_ENVIRONMENT: 'pooled-worker', REFSYNC_LISTS: 'shipment_modes,equipment_types,accessorials' };
    await startTestWorker(workerConfig(sb, url, extra), prefix);
    const env = { ...sandboxEnv(sb, extra), REDIS_URL: inject('redisUrl'), REFSYNC_QUEUE_PREFIX: prefix };
    const trigger = await runCli(['trigger'], env);
    expect(trigger.code, trigger.stderr).toBe(0);
    const [run] = await waitFor(async () => {
      const rows = await runsOf('pooled-worker');
      return rows[0]?.status === 'succeeded' && rows;
    }, 'the triggered run');
    expect((await snapshotsOf(run!.id)).map((s) => s.status)).toEqual(['ok', 'ok', 'ok']);
  });

  /** pg_locks is server-wide: other test files (and their syncs' locks) share the server. */
  const thisDatabase = 'database = (select oid from pg_database where datname = current_database())';

  it('a sync killed mid-run is closed as abandoned by the next; a live one is never taken for abandoned', async () => {
    const env = (lists: string) => ({ ...sandboxEnv(sb, { REFSYNC_ENVIRONMENT: 'pooled-killed', REFSYNC_LISTS: lists }), DATABASE_URL: url });
    // The target lock the apply takes (src/sync/target/target-lock.ts), held here so that the first sync
    // waits at its apply, mid-run, for as long as this test needs.
    const locker = new pg.Client({ connectionString: t.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('select pg_advisory_xact_lock(hashtextextended($1, 7302611))', [['pooled-killed', 'shipment_modes', ''].join('\u001f')]);
      const killed = spawnCli(['sync'], env('shipment_modes'));
      await waitFor(
        async () => (await t.db.query(`select 1 from pg_locks where ${thisDatabase} and locktype = 'advisory' and not granted`)).rows.length > 0,
        'the first sync to wait at its apply',
        60_000,
        50,
      );
      // Another sync of the same source, meanwhile, must leave the live run alone.
      const live = await runCli(['sync'], env('equipment_types'), 60_000);
      expect(live.code, live.stderr).toBe(0);
      expect((await runsOf('pooled-killed'))[0]!.status).toBe('running');
      killed.child.kill('SIGKILL');
      await killed.exited;
      // Its claim on the run goes with it: no run lock (class 7302612, src/sync/run/runs.ts) is left on
      // a server session the bouncer hands to other clients.
      await waitFor(
        async () => (await t.db.query(`select 1 from pg_locks where ${thisDatabase} and locktype = 'advisory' and classid = 7302612`)).rows.length === 0,
        "the killed sync's run lock to go",
        20_000,
        50,
      );
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
    const next = await runCli(['sync'], env('shipment_modes'), 60_000);
    expect(next.code, next.stderr).toBe(0);
    const runs = await runsOf('pooled-killed');
    expect(runs.map((r) => r.status)).toEqual(['failed', 'succeeded', 'succeeded']);
    expect(runs[0]!.error).toMatch(/^abandoned/);
  });
});
