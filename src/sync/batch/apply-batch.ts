// A run's batch: the small lists it takes as they are fetched and writes together after its last
// one, so that a run of many small lists pays a handful of statements rather than a transaction per
// list (docs/performance.md, P1 and P4). A list's sync asks the batch once, at the end of a fetch that
// never spilled, whether it takes the list: an unchanged list is set aside for one statement that
// records them all (unchanged-lists.ts), a list with no ok snapshot is held for a few transactions
// that load them all (first-loads-together.ts), and any other is not taken and is applied at once
// through its diff. What the batch could not write is nothing of it written: its caller syncs that
// list again the ordinary way (settle-batch.ts).
import type { Target } from '../../catalog/targets.ts';
import type { Database } from '../../db/database.ts';
import type { CollectedList, SummedUp } from '../collect/collect.ts';
import type { ApplyOptions } from '../load/apply-types.ts';
import { FirstLoadsTogether, type FirstLoadsApply } from '../load/first-loads-together.ts';
import type { LoadResult } from '../load/loader.ts';
import { fetchedFields } from '../load/snapshot-row.ts';
import { UnchangedLists, type LastOk } from '../load/unchanged-lists.ts';

/** What the batch did with a list it took: set aside as unchanged, or held as a first load (`firstLoad`). */
export type Taken = Extract<LoadResult, { setAside: true }>;

/**
 * What the batch's apply wrote: each taken list's snapshot id, or null for one of which nothing was
 * written (another sync holds or changed it meanwhile, its views wait, its group failed), to sync
 * again the ordinary way.
 */
export interface BatchApplied {
  ids: Map<Target, number | null>;
  /**
   * Why the unchanged lists' one statement failed, when it did: their lists are not in `ids`, as the
   * statement may have committed before its answer was lost.
   */
  unrecorded?: unknown;
}

/** One run's batch: its unchanged lists and its small first loads, written together after its last list. */
export class ApplyBatch {
  readonly #unchanged: UnchangedLists;
  readonly #firstLoads: FirstLoadsTogether;

  /** `lastOk`: the run's lists' last ok snapshots as it read them when it began (readLastOk). */
  constructor(lastOk: ReadonlyMap<string, LastOk>, firstLoads: FirstLoadsApply) {
    this.#unchanged = new UnchangedLists(lastOk);
    this.#firstLoads = new FirstLoadsTogether(lastOk, firstLoads);
  }

  /**
   * The target's last ok snapshot as the run read it, when the fetch's served digest is that
   * snapshot's (UnchangedLists#servedBefore): a fetch finished with it is taken as unchanged.
   */
  servedBefore(target: Target, servedDigest: string | null): SummedUp | undefined {
    return this.#unchanged.servedBefore(target, servedDigest);
  }

  /**
   * Takes a small fetched list into the batch, or not: set aside when its content hash is its last
   * ok snapshot's as the run read it, held when the run read no ok snapshot of it. Undefined when not
   * taken: a list changed since, to apply at once (the run's read tells it is not unchanged).
   */
  take(target: Target, collected: CollectedList, options: ApplyOptions): Taken | undefined {
    if (this.#unchanged.setAside(target, fetchedFields(collected, options)) === 'set-aside') return { setAside: true };
    if (this.#firstLoads.hold(target, collected, options)) return { setAside: true, firstLoad: true };
    return undefined;
  }

  /**
   * The run's targets, of which those with no ok snapshot may yet be held (FirstLoadsTogether#expect):
   * returned, the run's possible first loads.
   */
  expect(targets: readonly Target[]): Target[] {
    return this.#firstLoads.expect(targets);
  }

  /** A target's sync has ended, taken or not: the first loads held need not wait for it. */
  done(target: Target): void {
    this.#firstLoads.done(target);
  }

  /**
   * Writes what the batch took, once every held first load's apply has ended: the unchanged lists
   * in one statement on `db` (beside the first loads' last applies), as snapshots of run `runId`.
   */
  async apply(db: Database, runId: number): Promise<BatchApplied> {
    const loading = this.#firstLoads.applied();
    const recorded = await this.#unchanged.record(db, runId).then(
      (ids) => ({ ids }),
      (unrecorded: unknown) => ({ ids: new Map<Target, number | null>(), unrecorded }),
    );
    const ids = new Map([...recorded.ids, ...(await loading)]);
    return 'unrecorded' in recorded ? { ids, unrecorded: recorded.unrecorded } : { ids };
  }
}
