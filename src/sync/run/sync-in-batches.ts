// The one way lists are synced and written, whoever syncs them: `refsync sync` (run-sync.ts: a
// batch per source), a worker's run job syncing its small lists itself
// (src/queue/handlers/inline-targets.ts: one batch) and a target job
// (src/queue/handlers/target-job.ts: its one list, a batch of one). The lists go in lanes
// (sync-targets.ts), each list's batch is told as its sync ends, and each batch is then written and
// its lists settled (settle-batch.ts). What differs between them is the policy: how many lanes and
// what stops them, how one list is synced and settled, and what a batch's lists become once it is
// written: one it did not write is synced again in process and left to a target job in a run job,
// and a failed unchanged statement fails the run in process and leaves its lists to target jobs in
// a run job. A target job's own waits and retries (its gate, a 429, the verdict) are in its sync.
import type { Target } from '../../catalog/targets.ts';
import type { ApplyBatch } from '../batch/apply-batch.ts';
import { settleBatch, type BatchSettling } from '../batch/settle-batch.ts';
import type { TargetOutcome } from '../outcome/target-outcome.ts';
import { syncTargets, type TargetsPolicy } from './sync-targets.ts';

/** How a caller syncs its lists: the lanes' policy, each list's batch, and how the batches' lists are settled. */
export interface BatchesPolicy<R> extends Omit<TargetsPolicy<Target, R>, 'ended'> {
  /** The batch the list is in, told when its sync ends; undefined when there is none (its run never started). */
  batchOf(target: Target): ApplyBatch | undefined | Promise<ApplyBatch | undefined>;
  /**
   * Called once no list is in flight, however the lanes ended, before any batch is written: what
   * the lanes held (a run job's gate slots) is given back, not kept through the writes.
   */
  lanesEnded?(): Promise<void>;
  /**
   * How each batch's lists are settled once it is written. Absent when every batch is a batch of one
   * (ApplyBatch.ofOne), whose list is written as it is taken and settled by its sync.
   */
  settle?: BatchesSettling<R>;
}

/** How the lists of each batch are settled once it is written. */
export interface BatchesSettling<R> {
  /**
   * The list's outcome as its sync left it, for its batch: one set aside is written and settled with
   * the batch, the others are as their sync settled them. Undefined for a result with none.
   */
  outcomeOf(result: R): TargetOutcome | undefined;
  /**
   * How the lists of `batch` are settled once it is written: `outcomes`, its lists' outcomes as their
   * syncs left them, in the targets' order. Not asked for a batch none of whose lists has one.
   */
  settling(batch: ApplyBatch, outcomes: readonly TargetOutcome[]): BatchFinish | Promise<BatchFinish>;
}

/** How a batch's lists are settled (settle-batch.ts), and what its caller does once they all are. */
export interface BatchFinish extends BatchSettling {
  /**
   * Told the batch's outcomes once each is settled, to replace any of them in place: in process, the
   * failures not recorded yet are recorded and the run is counted.
   */
  settled?(outcomes: TargetOutcome[]): Promise<void>;
}

/**
 * Syncs the targets in lanes, each told to its batch as it ends, then writes each batch in the order
 * its first list came and settles its lists. Each target's result in the targets' order (a list its
 * batch took, its settled outcome), undefined for one never started. What a sync throws stops the
 * lanes and is thrown once the lists in flight have ended (sync-targets.ts), before any batch is
 * written.
 */
export function syncInBatches<R>(
  targets: readonly Target[],
  policy: BatchesPolicy<R> & { settle: BatchesSettling<R> },
): Promise<Array<R | TargetOutcome | undefined>>;
/** Batches of one, settled by their syncs: each target's result as its sync returned it. */
export function syncInBatches<R>(targets: readonly Target[], policy: BatchesPolicy<R> & { settle?: undefined }): Promise<Array<R | undefined>>;
export async function syncInBatches<R>(targets: readonly Target[], policy: BatchesPolicy<R>): Promise<Array<R | TargetOutcome | undefined>> {
  let synced: Array<R | undefined>;
  try {
    synced = await syncTargets<Target, R>(targets, {
      ...policy,
      // Taken or not, this list is no longer to come: the batch's last first loads need not wait for it.
      ended: async (target) => (await policy.batchOf(target))?.done(target),
    });
  } finally {
    await policy.lanesEnded?.();
  }
  if (!policy.settle) return synced;
  const settled = await settleEach(targets, synced, policy, policy.settle);
  return synced.map((result, i) => settled.get(i) ?? result);
}

/** Writes each batch and settles its lists: each list's settled outcome, by its index in `targets`. */
async function settleEach<R>(
  targets: readonly Target[],
  synced: ReadonlyArray<R | undefined>,
  policy: BatchesPolicy<R>,
  settle: BatchesSettling<R>,
): Promise<Map<number, TargetOutcome>> {
  const batches = new Map<ApplyBatch, number[]>();
  for (const [i, target] of targets.entries()) {
    const batch = await policy.batchOf(target);
    if (batch) batches.set(batch, [...(batches.get(batch) ?? []), i]);
  }
  const settled = new Map<number, TargetOutcome>();
  for (const [batch, indexes] of batches) {
    const withOutcome = indexes.flatMap((i) => {
      const result = synced[i];
      const outcome = result === undefined ? undefined : settle.outcomeOf(result);
      return outcome ? [{ i, outcome }] : [];
    });
    if (withOutcome.length === 0) continue;
    const outcomes = withOutcome.map(({ outcome }) => outcome);
    const how = await settle.settling(batch, [...outcomes]);
    await settleBatch(batch, outcomes, how);
    await how.settled?.(outcomes);
    for (const [k, { i }] of withOutcome.entries()) settled.set(i, outcomes[k]!);
  }
  return settled;
}
