import type { Queryable } from '../db/database.ts';
import { recordedChanges } from './change-feed-sql.ts';

export interface ChangeRow {
  id: number;
  detected_at: Date;
  environment: string;
  list_key: string;
  variant: string;
  change: string;
  entry_key: string;
  code: string | null;
  changed_fields: string[] | null;
  /** Per usage column, the facts in use with a removed or modified code (null when none). */
  impact: unknown;
  description: string | null;
  before: unknown;
  after: unknown;
}

export interface ChangesFilter {
  lists: readonly string[] | null;
  since: Date | null;
  environment: string | null;
  limit: number;
}

/** Recorded entry changes, newest first (`refsync changes` and the status page). */
export async function recentChanges(q: Queryable, filter: ChangesFilter): Promise<ChangeRow[]> {
  const { rows } = await q.query<ChangeRow>(recordedChanges, [filter.lists, filter.since, filter.environment, filter.limit]);
  return rows;
}
