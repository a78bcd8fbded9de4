import type { Database } from '../../db/database.ts';
import { recordedOutcome } from '../load/unchanged-lists.ts';
import type { TargetOutcome } from '../outcome/target-outcome.ts';
import type { ApplyBatch } from './apply-batch.ts';

/** What a run does with its batch's lists once written: the part of settling them that differs between runs. */
export interface BatchSettling {
  /** Where the unchanged lists are recorded, and in which run. */
  db: Database;
  runId: number;
  /** A list the batch wrote, its outcome now bearing its snapshot: settled and told as the run settles any. */
  recorded(outcome: TargetOutcome): Promise<TargetOutcome>;
  /**
   * A list of which the batch wrote nothing: synced again the ordinary way (its new outcome), or left
   * to a later sync (its outcome, still set aside).
   */
  again(outcome: TargetOutcome): Promise<TargetOutcome>;
  /**
   * The unchanged lists' one statement failed, perhaps after its commit: throw to stop the settle,
   * return nothing to leave their outcomes set aside, or return a database to write the batch on
   * instead (in process, the run claim's own connection when the pool was refused one).
   */
  unrecorded(err: unknown): Promise<Database | undefined>;
}

/**
 * Writes the run's batch (ApplyBatch#apply) and settles each list it took, replacing its outcome in
 * `outcomes`: recorded with its snapshot, or synced again where nothing of it was written. Nothing
 * is written when no outcome is set aside (none taken, or all settled before).
 */
export async function settleBatch(batch: ApplyBatch, outcomes: TargetOutcome[], how: BatchSettling): Promise<void> {
  if (!outcomes.some((outcome) => outcome.setAside)) return;
  let { ids, unrecorded } = await batch.apply(how.db, how.runId);
  while (unrecorded !== undefined) {
    const elsewhere = await how.unrecorded(unrecorded);
    if (!elsewhere) break;
    ({ ids, unrecorded } = await batch.apply(elsewhere, how.runId));
  }
  for (const [i, outcome] of outcomes.entries()) {
    if (!outcome.setAside || !ids.has(outcome.target)) continue;
    const snapshotId = ids.get(outcome.target) ?? null;
    outcomes[i] = snapshotId === null ? await how.again(outcome) : await how.recorded(recordedOutcome(outcome, snapshotId));
  }
}
