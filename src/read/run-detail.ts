// One run and the outcome of each of its targets, for the status server's run page.
import type { Queryable } from '../db/database.ts';
import type { RunRow } from './status-query.ts';
import type { SnapshotOutcome } from './target-history.ts';
import { runRow, runSnapshots } from './status-sql.ts';

/** A target's snapshot in the run: how that list ended. */
export interface RunTargetRow extends SnapshotOutcome {
  list_key: string;
  variant: string;
}

export async function runById(q: Queryable, id: number): Promise<RunRow | undefined> {
  const { rows } = await q.query<RunRow>(runRow, [id]);
  return rows[0];
}

/** The snapshots the run recorded, by list and variant. */
export async function runTargets(q: Queryable, runId: number): Promise<RunTargetRow[]> {
  const { rows } = await q.query<RunTargetRow>(runSnapshots, [runId]);
  return rows;
}
