// Retention: what only grows (one snapshot row per fetch, one run per schedule slot, every alert)
// is deleted once old, in batches so no statement holds locks for long. Safe to run from several
// workers at once: deleting rows another worker already deleted is a no-op.
import type { RetentionConfig } from '../config/retention.ts';
import type { Queryable } from '../db/database.ts';
import { prunableSnapshots, prunableAlerts, prunableRuns, countOf, deleteBatch } from './prune-sql.ts';

export interface PruneCounts {
  snapshots: number;
  alerts: number;
  runs: number;
}

const BATCH = 5_000;

async function count(db: Queryable, select: string, days: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(countOf(select), [days]);
  return rows[0]?.n ?? 0;
}

async function deleteAll(db: Queryable, table: string, select: string, days: number): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(deleteBatch(table, select, BATCH), [days]);
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
