import type { Queryable } from '../db/database.ts';
import { targetStatusQuery, lastRunPerSource } from './status-sql.ts';

export interface TargetStatusRow {
  environment: string;
  list_key: string;
  variant: string;
  last_status: string;
  last_fetched_at: Date;
  last_error: string | null;
  last_error_code: string | null;
  /** Why the latest snapshot is held: `schema` (its schema policy) or `removals` (too many); null when not held. */
  held_reason: 'schema' | 'removals' | null;
  /** Values of the last ok fetch that do not fit their typed column. */
  nonconforming: number;
  /** A change of the list's columns waiting for objects of the user that depend on its views; null when none. */
  views_waiting: { since: string; views: string[]; dependents: string[]; columns: unknown[] } | null;
  last_success_at: Date | null;
  last_change_at: Date | null;
  current_entries: number;
  /** Why the impact of the target's last change on the user's data was not computed; null when it was. */
  impact_error: string | null;
}

export interface RunRow {
  id: number;
  environment: string;
  source: string;
  trigger: string;
  status: string;
  started_at: Date;
  finished_at: Date | null;
  targets_total: number;
  targets_done: number;
  targets_failed: number;
  error: string | null;
}

/** Last fetch, last success, last change and current size of every target ever synced. */
export async function targetStatus(q: Queryable): Promise<TargetStatusRow[]> {
  const { rows } = await q.query<TargetStatusRow>(targetStatusQuery);
  return rows;
}

/** The latest run of each source. */
export async function lastRuns(q: Queryable): Promise<RunRow[]> {
  const { rows } = await q.query<RunRow>(lastRunPerSource);
  return rows;
}
