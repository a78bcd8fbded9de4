// Retention on real history: a list synced unchanged several times, changed once, with alerts and
// runs, all made 40 days old; then `refsync prune`. What status, the history, as-of queries and the
// metrics read must survive it.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { targetStatus } from '../../src/read/status-query.ts';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { alertFixture, VERSION } from '../alerts/fixture.ts';
import { startTestWorker, waitFor, workerConfig, testQueuePrefix } from '../queue/helpers.ts';
import { startPeriodicPrune } from '../../src/retention/periodic.ts';
import { captureLogs } from '../helpers/logs.ts';

const t = useTestDatabase();
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await useSandbox();
});

async function snapshotsOf(environment: string) {
  const { rows } = await t.db.query<{ id: number; status: string; changed: boolean }>(
    'select id::int as id, status, changed from refdata.snapshots where environment = $1 order by id',
    [environment],
  );
  return rows;
}

/** Moves a source's whole history `days` into the past, as if it had run then. */
async function age(environment: string, days: number) {
  const shift = `make_interval(days => ${days})`;
  await t.db.query(`update refdata.snapshots set fetched_at = fetched_at - ${shift} where environment = $1`, [environment]);
  await t.db.query(`update refdata.sync_runs set started_at = started_at - ${shift}, finished_at = finished_at - ${shift} where environment = $1`, [
    environment,
  ]);
  await t.db.query(`update refdata.alerts set created_at = created_at - ${shift} where environment = $1`, [environment]);
}

describe('refsync prune', () => {
  it('deletes old unchanged snapshots, delivered alerts and freed runs, keeping what status, history and as-of queries read', async () => {
    const fx = alertFixture(t.db, t.url, sandbox, { REFSYNC_ALERT_ON: 'added,run_completed' });
    const env = fx.source.environment;
    try {
      for (let i = 0; i < 3; i++) await fx.sync();
      sandbox.control.addEntry('charge_codes', { code: 'PRUNE1', description: 'Retention test', category: 'accessorial' }, { version: VERSION });
      for (let i = 0; i < 3; i++) await fx.sync();
    } finally {
      await fx.close();
    }
    const before = await snapshotsOf(env);
    expect(before.map((s) => s.changed)).toEqual([true, false, false, true, false, false]);
    await t.db.query("update refdata.alerts set state = 'delivered', delivered_at = now() where environment = $1", [env]);
    const { rows: pending } = await t.db.query<{ id: number }>(
      `insert into refdata.alerts (snapshot_id, kind, environment, list_key, variant, payload, state)
       values ($1, 'held', $2, 'charge_codes', $3, '{}', 'pending') returning id`,
      [before[1]!.id, env, VERSION],
    );
    const asOf = `select entry_key, payload from refdata.entries_as_of('charge_codes', now(), $1, $2) order by entry_key`;
    const asOfBefore = (await t.db.query(asOf, [VERSION, env])).rows;
    const statusBefore = (await targetStatus(t.db)).find((r) => r.environment === env);
    await age(env, 40);

    const dbEnv = { DATABASE_URL: t.url };
    const dry = await runCli(['prune', '--dry-run', '--json'], { env: dbEnv });
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    // Alerts and runs are kept 90 days: at 40, only unchanged snapshots are due.
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, snapshots: 2, alerts: 0, runs: 0 });
    expect(await snapshotsOf(env)).toEqual(before);

    const res = await runCli(['prune'], { env: dbEnv });
    expect(res.stdout).toBe(
      'deleted 2 unchanged snapshots (older than 30 days)\ndeleted 0 delivered or skipped alerts (older than 90 days)\ndeleted 0 finished runs (older than 90 days)\n',
    );
    // The second snapshot is named by the pending alert; the last one is the target's last (ok) one.
    expect((await snapshotsOf(env)).map((s) => s.id)).toEqual([before[0]!.id, before[1]!.id, before[3]!.id, before[5]!.id]);

    // Past 90 days: the six run_completed alerts and the added one, delivered, go (the pending one
    // stays), and then the runs no snapshot or alert names any more (the last run stays).
    await age(env, 60);
    const again = await runCli(['prune', '--json'], { env: dbEnv });
    expect(JSON.parse(again.stdout)).toMatchObject({ snapshots: 0, alerts: 7, runs: 2 });
    expect((await t.db.query('select id from refdata.alerts where environment = $1', [env])).rows.map((r) => Number(r.id))).toEqual([Number(pending[0]!.id)]);
    const { rows: runs } = await t.db.query<{ id: number }>('select id from refdata.sync_runs where environment = $1', [env]);
    expect(runs).toHaveLength(4);

    // Nothing that points at a snapshot or a run points at a deleted one.
    const { rows: dangling } = await t.db.query<{ what: string; n: number }>(
      `select 'entries.first_snapshot_id' as what, count(*)::int as n from refdata.entries e
        where e.environment = $1 and not exists (select 1 from refdata.snapshots s where s.id = e.first_snapshot_id)
       union all
       select 'entries.last_snapshot_id', count(*)::int from refdata.entries e
        where e.environment = $1 and e.last_snapshot_id is not null and not exists (select 1 from refdata.snapshots s where s.id = e.last_snapshot_id)
       union all
       select 'entry_changes.snapshot_id', count(*)::int from refdata.entry_changes c
        where c.environment = $1 and not exists (select 1 from refdata.snapshots s where s.id = c.snapshot_id)
       union all
       select 'target_last_ok.snapshot_id', count(*)::int from refdata.target_last_ok l
        where l.environment = $1 and not exists (select 1 from refdata.snapshots s where s.id = l.snapshot_id)`,
      [env],
    );
    expect(dangling.filter((d) => d.n > 0)).toEqual([]);
    expect((await t.db.query(asOf, [VERSION, env])).rows).toEqual(asOfBefore);
    const statusAfter = (await targetStatus(t.db)).find((r) => r.environment === env);
    expect(statusAfter).toMatchObject({ last_status: 'ok', current_entries: statusBefore!.current_entries });
    expect(statusAfter!.last_change_at).not.toBeNull();
    const status = await runCli(['status'], { env: dbEnv });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(env);
  }, 60_000);

  it('is applied by the worker, and 0 days keeps a kind forever', async () => {
    const extra = { REFSYNC_ENVIRONMENT: 'prune-worker', REFSYNC_LISTS: 'shipment_modes', REFSYNC_RETAIN_ALERTS_DAYS: '0' };
    const fx = alertFixture(t.db, t.url, sandbox, { ...extra, REFSYNC_ALERT_ON: 'run_completed' });
    try {
      for (let i = 0; i < 3; i++) await fx.sync();
    } finally {
      await fx.close();
    }
    await t.db.query("update refdata.alerts set state = 'delivered' where environment = 'prune-worker'");
    await age('prune-worker', 40);
    const worker = await startTestWorker(workerConfig(sandbox, t.url, extra), testQueuePrefix(), { retentionIntervalMs: 100 });
    await waitFor(async () => (await snapshotsOf('prune-worker')).length === 2, 'the worker to prune');
    // Stopped here, not after the file: its pruner, every 100 ms, would otherwise prune the next
    // case's old rows before that case's own pruner does, and that case checks what its pruner says.
    await worker.close();
    const { rows } = await t.db.query<{ n: number }>("select count(*)::int as n from refdata.alerts where environment = 'prune-worker'");
    expect(rows[0]!.n).toBe(3);
  }, 60_000);

  it('says once per table, the first time a worker prunes it, what goes and which setting keeps it', async () => {
    // run_completed alerts (never delivered here) keep every run: only snapshots are prunable.
    const extra = { REFSYNC_ENVIRONMENT: 'prune-first', REFSYNC_LISTS: 'shipment_modes', REFSYNC_ALERT_ON: 'run_completed' };
    const syncThriceAndAge = async () => {
      const fx = alertFixture(t.db, t.url, sandbox, extra);
      try {
        for (let i = 0; i < 3; i++) await fx.sync();
      } finally {
        await fx.close();
      }
      await age('prune-first', 40);
    };
    await syncThriceAndAge();
    const logs = captureLogs('info');
    const retention = { snapshotsDays: 30, alertsDays: 90, runsDays: 90 };
    const periodic = startPeriodicPrune(t.db, retention, logs.logger, 50);
    try {
      await waitFor(async () => (await snapshotsOf('prune-first')).length === 2, 'the first pass to prune');
      // More old rows for the later passes: the line must not come again.
      await syncThriceAndAge();
      await waitFor(async () => (await snapshotsOf('prune-first')).length === 2, 'a later pass to prune');
    } finally {
      await periodic.close();
    }
    const first = logs.lines.map((l) => JSON.parse(l) as { msg: string; table?: string }).filter((l) => l.msg.startsWith('retention: first prune'));
    expect(first.map((l) => l.msg)).toEqual([
      'retention: first prune of refdata.snapshots by this worker: unchanged snapshots older than 30 days are deleted (REFSYNC_RETAIN_SNAPSHOTS_DAYS; 0 keeps them forever)',
    ]);
  }, 60_000);
});
