// Retention: what only grows (one snapshot row per fetch, one run per schedule slot, every alert)
// is deleted once old, in batches so no statement holds locks for long. Safe to run from several
// workers at once: deleting rows another worker already deleted is a no-op.
import type { RetentionConfig } from '../config/retention.ts';
import type { Queryable } from '../db/database.ts';

export interface PruneCounts {
  snapshots: number;
  alerts: number;
  runs: number;
}

const BATCH = 5_000;

/**
 * Unchanged ok snapshots older than the cut-off, except each target's last snapshot and last ok one
 * (status, the next sync's comparison and the metrics read them) and any an alert names. Changed,
 * held and failed snapshots are history and stay. Entries point only at changed snapshots
 * (first_snapshot_id, last_snapshot_id) and change rows too, so neither loses its reference.
 */
const prunableSnapshots = `
  select s.id from refdata.snapshots s
   where s.status = 'ok' and not s.changed
     and s.fetched_at < clock_timestamp() - make_interval(days => $1)
     and exists (select 1 from refdata.snapshots n
                  where n.environment = s.environment and n.list_key = s.list_key and n.variant = s.variant and n.id > s.id)
     and not exists (select 1 from refdata.target_last_ok t where t.snapshot_id = s.id)
     and not exists (select 1 from refdata.alerts a where a.snapshot_id = s.id)`;

const prunableAlerts = `
  select a.id from refdata.alerts a
   where a.state in ('delivered', 'skipped') and a.created_at < clock_timestamp() - make_interval(days => $1)`;

/** Finished runs older than the cut-off that nothing refers to, except each environment's last run. */
const prunableRuns = `
  select r.id from refdata.sync_runs r
   where r.finished_at is not null and r.finished_at < clock_timestamp() - make_interval(days => $1)
     and exists (select 1 from refdata.sync_runs n where n.environment = r.environment and n.started_at > r.started_at)
     and not exists (select 1 from refdata.snapshots s where s.run_id = r.id)
     and not exists (select 1 from refdata.alerts a where a.run_id = r.id)`;

async function count(db: Queryable, select: string, days: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from (${select}) x`, [days]);
  return rows[0]?.n ?? 0;
}

async function deleteAll(db: Queryable, table: string, select: string, days: number): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `with gone as (delete from refdata.${table} where id in (${select} limit ${BATCH}) returning 1) select count(*)::int as n from gone`,
      [days],
    );
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < BATCH) return total;
  }
}

/**
 * Applies the retention settings: alerts first, then snapshots, then the runs they freed. With
 * dryRun, counts what would go and deletes nothing. A setting of 0 days keeps that kind forever.
 */
export async function prune(db: Queryable, retention: RetentionConfig, options: { dryRun?: boolean } = {}): Promise<PruneCounts> {
  const apply = (table: string, select: string, days: number) =>
    days === 0 ? Promise.resolve(0) : options.dryRun ? count(db, select, days) : deleteAll(db, table, select, days);
  const alerts = await apply('alerts', prunableAlerts, retention.alertsDays);
  const snapshots = await apply('snapshots', prunableSnapshots, retention.snapshotsDays);
  const runs = await apply('sync_runs', prunableRuns, retention.runsDays);
  return { snapshots, alerts, runs };
}
