import type { Queryable } from '../db/database.ts';
import { targetHealthQuery } from './status-sql.ts';

/** Whether a target needs a human: its latest snapshot held, or failing since its last ok one. */
export interface TargetHealthRow {
  environment: string;
  list_key: string;
  variant: string;
  held: boolean;
  /** Why it is held: `schema` (its schema policy) or `removals` (a mass removal); null when not held. */
  held_reason: 'schema' | 'removals' | null;
  /**
   * Failed or unavailable snapshots after the last ok one (all of them when it never synced ok): a
   * list the service answers 404 for is not synced either, and its first such answer counts.
   */
  consecutive_failures: number;
}

/** The held flag and the failure streak of every target ever synced; read at scrape and page time. */
export async function targetHealth(q: Queryable): Promise<TargetHealthRow[]> {
  const { rows } = await q.query<TargetHealthRow>(targetHealthQuery);
  return rows;
}
