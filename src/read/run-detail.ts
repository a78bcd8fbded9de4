// One run and the outcome of each of its targets, for the status server's run page.
import type { Queryable } from '../db/database.ts';
import type { RunRow } from './status-query.ts';
import type { SnapshotOutcome } from './target-history.ts';

/** A target's snapshot in the run: how that list ended. */
export interface RunTargetRow extends SnapshotOutcome {
  list_key: string;
  variant: string;
}

export async function runById(q: Queryable, id: number): Promise<RunRow | undefined> {
  const { rows } = await q.query<RunRow>(
    `select id, environment, source, trigger, status, started_at, finished_at, targets_total, targets_done, targets_failed, error
     from refdata.sync_runs where id = $1`,
    [id],
  );
  return rows[0];
}

/** The snapshots the run recorded, by list and variant. */
export async function runTargets(q: Queryable, runId: number): Promise<RunTargetRow[]> {
  const { rows } = await q.query<RunTargetRow>(
    `select id, list_key, variant, fetched_at, status, entry_count, added, removed, modified, reappeared, error, error_code, duration_ms
     from refdata.snapshots where run_id = $1
     order by list_key, variant, id`,
    [runId],
  );
  return rows;
}
