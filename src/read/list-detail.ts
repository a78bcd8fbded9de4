// The detail of one list, per source and variant: what `refsync status --list KEY` prints (and its
// --json, which keeps every column). Read-only; each query is bounded.
import type { Queryable } from '../db/database.ts';
import { listTargetsQuery, targetSnapshots, targetChanges } from './status-sql.ts';

/** One variant of the list in one environment, as its latest snapshot left it. */
export interface ListTargetRow {
  environment: string;
  /** The source name of the run that recorded the latest snapshot ('' for runs before names were kept). */
  source: string;
  list_key: string;
  variant: string;
  snapshot_id: number;
  status: string;
  error_code: string | null;
  error: string | null;
  fetched_at: Date;
  last_ok_at: Date | null;
  last_change_at: Date | null;
  current_entries: number;
  /** Failed snapshots after the last ok one (all of them when it never synced ok). */
  consecutive_failures: number;
}

/** Every column of a snapshot row, and the source of its run. */
export type SnapshotDetail = Record<string, unknown> & { id: number; fetched_at: Date; status: string; error: string | null };

/** Every column of a change row. */
export type ChangeDetail = Record<string, unknown> & {
  id: number;
  detected_at: Date;
  change: string;
  entry_key: string;
  code: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  changed_fields: string[] | null;
};

/**
 * The variants of `listKey` that have a snapshot, in the environments of `source` (a source name as
 * runs record it, or an environment; null for all), ordered by environment and variant.
 */
export async function listTargets(q: Queryable, listKey: string, source: string | null): Promise<ListTargetRow[]> {
  const { rows } = await q.query<ListTargetRow>(listTargetsQuery, [listKey, source]);
  return rows;
}

/** The target's newest snapshots, newest first, every column. */
export async function lastSnapshots(q: Queryable, t: Pick<ListTargetRow, 'environment' | 'list_key' | 'variant'>, limit: number): Promise<SnapshotDetail[]> {
  const { rows } = await q.query<SnapshotDetail>(targetSnapshots, [t.environment, t.list_key, t.variant, limit]);
  return rows;
}

/** The target's newest entry changes, newest first, every column (before and after whole). */
export async function lastChanges(q: Queryable, t: Pick<ListTargetRow, 'environment' | 'list_key' | 'variant'>, limit: number): Promise<ChangeDetail[]> {
  const { rows } = await q.query<ChangeDetail>(targetChanges, [t.environment, t.list_key, t.variant, limit]);
  return rows;
}
