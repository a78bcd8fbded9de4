// The SQL behind the status page at `/`, by name. Read-only; each query is bounded.
import type { Queryable } from '../db/database.ts';
import { latestTargetSyncsQuery, recoveredFailureRows } from './status-sql.ts';

/** One snapshot of a target, with the source of the run that recorded it. */
interface SnapshotRow {
  source: string | null;
  environment: string;
  list_key: string;
  variant: string;
  fetched_at: Date;
  status: string;
  error: string | null;
  error_code: string | null;
}

/** The latest snapshot of every target, with the last ok snapshot. */
export interface TargetSyncRow extends SnapshotRow {
  added: number;
  removed: number;
  modified: number;
  reappeared: number;
  reshaped: number;
  /** Entries in the last ok snapshot: what readers see now. */
  entries: number | null;
  last_ok_at: Date | null;
  /** Why the impact of the target's last change on the user's data was not computed; null when it was. */
  impact_error: string | null;
}

export interface FailureRow extends SnapshotRow {
  id: number;
}

export async function latestTargetSyncs(q: Queryable): Promise<TargetSyncRow[]> {
  const { rows } = await q.query<TargetSyncRow>(latestTargetSyncsQuery);
  return rows;
}

/**
 * The newest failed or unavailable snapshots of lists that have synced since (a later snapshot
 * neither failed nor unavailable), newest first: failures that no longer need anyone.
 */
export async function recoveredFailures(q: Queryable, limit: number): Promise<FailureRow[]> {
  const { rows } = await q.query<FailureRow>(recoveredFailureRows, [limit]);
  return rows;
}
