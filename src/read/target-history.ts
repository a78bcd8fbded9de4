// What one target (a list variant of one environment) went through: its latest snapshots, newest
// first, and its latest entry changes with before and after. The status server's list page draws
// the chart and the tables from these; each query is bounded by its limit.
import type { Queryable } from '../db/database.ts';
import { historySnapshots, historyChanges } from './status-sql.ts';

/** A list variant of one environment, as the database keys it. */
export interface TargetKey {
  environment: string;
  list_key: string;
  variant: string;
}

/** How one fetch of a target ended, as its snapshot row says: what the run page and the list page show. */
export interface SnapshotOutcome {
  id: number;
  fetched_at: Date;
  status: string;
  /** Entries the snapshot saw (null when the fetch failed). */
  entry_count: number | null;
  added: number;
  removed: number;
  modified: number;
  reappeared: number;
  error: string | null;
  error_code: string | null;
  duration_ms: number | null;
}

export interface TargetSnapshotRow extends SnapshotOutcome {
  run_id: number | null;
  /** The target's first ok snapshot: a first load, whose entries count as added but are no change. */
  baseline: boolean;
}

export interface TargetChangeRow {
  id: number;
  snapshot_id: number;
  detected_at: Date;
  change: string;
  entry_key: string;
  code: string | null;
  changed_fields: string[] | null;
  before: unknown;
  after: unknown;
}

/** The target's newest snapshots, newest first. */
export async function targetSnapshots(q: Queryable, target: TargetKey, limit: number): Promise<TargetSnapshotRow[]> {
  const { rows } = await q.query<TargetSnapshotRow>(historySnapshots, [target.environment, target.list_key, target.variant, limit]);
  return rows;
}

/** The target's newest entry changes, newest first. */
export async function targetChanges(q: Queryable, target: TargetKey, limit: number): Promise<TargetChangeRow[]> {
  const { rows } = await q.query<TargetChangeRow>(historyChanges, [target.environment, target.list_key, target.variant, limit]);
  return rows;
}
