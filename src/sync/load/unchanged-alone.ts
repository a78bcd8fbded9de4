import type { Target } from '../../catalog/targets.ts';
import type { Connection } from '../../db/database.ts';
import { zeroCounts, type ApplyOptions, type ApplyResult } from './apply-types.ts';
import type { CollectedList } from '../collect/collect.ts';
import { fetchedFields } from './snapshot-row.ts';
import { recordUnchangedListsStatement } from '../sql.ts';

/** The result of an unchanged fetch, recorded as snapshot `snapshotId` (the run's progress counted with it, when said). */
export function unchangedResult(snapshotId: number, runAdvanced = false): { applied: ApplyResult } {
  const applied: ApplyResult = { status: 'unchanged', snapshotId, counts: zeroCounts(), baseline: false };
  if (runAdvanced) applied.runAdvanced = true;
  return { applied };
}

/**
 * Records the fetch in one statement that is its own transaction if it is unchanged: a batch of one
 * through refdata.record_unchanged_lists, the one writer of the unchanged record (migration 0020), for
 * a list whose last ok snapshot was not read first (ApplyBatch.ofOne, and a large list's resync that
 * staged nothing). The one round trip an unchanged list costs, with the run's progress counted in it
 * when options.advanceRun says so. Undefined when it is not recorded (it is not unchanged, or another
 * sync holds its lock right now: nothing written, the lock released): the load then applies it in a
 * transaction of its own, as ever, whose apply records it if it is unchanged by then. Tried first
 * because nearly every sync of a reference list is unchanged; a changed list pays this one round trip
 * more.
 */
export async function recordIfUnchanged(
  conn: Connection,
  target: Target,
  collected: CollectedList,
  options: ApplyOptions,
): Promise<{ applied: ApplyResult } | undefined> {
  const fetched = fetchedFields(collected, options);
  const [row] = await conn.alone(recordUnchangedListsStatement(target.source.environment, fetched.runId, [{ target, fetched }], options.advanceRun));
  const snapshotId = row?.snapshot_id;
  if (snapshotId === null || snapshotId === undefined) return undefined;
  return unchangedResult(Number(snapshotId), row!.run_advanced === true);
}
