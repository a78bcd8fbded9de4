// A run's batch: the small lists it takes as they are fetched and writes together after its last
// one, so that a run of many small lists pays a handful of statements rather than a transaction per
// list (docs/performance.md, P1 and P4). A list's sync asks the batch once, at the end of a fetch that
// never spilled, whether it takes the list: an unchanged list is set aside for one statement that
// records them all (unchanged-lists.ts), a list with no ok snapshot is gathered for a few transactions
// that load them all (first-loads-together.ts), and any other is not taken and is applied at once
// through its diff. What the batch could not write is nothing of it written: its caller syncs that
// list again the ordinary way (settle-batch.ts).
//
// A list synced on its own (a worker's target job, a list synced again) is a batch of one
// (ApplyBatch.ofOne), which read no last ok snapshot: reading it first would be a round trip more
// than the list's unchanged fetch costs. Every fetch it is asked about may be unchanged, and the one
// statement that would record it decides, at once: recorded, or not taken (changed, a first load, its
// lock taken by another sync) and applied at once the ordinary way, the fetch in hand.
import type { Target } from '../../catalog/targets.ts';
import type { Connection, Database } from '../../db/database.ts';
import type { CollectedList, SummedUp } from '../collect/collect.ts';
import type { ApplyOptions, ApplyResult } from '../load/apply-types.ts';
import { FirstLoadsTogether, type FirstLoadsApply } from '../load/first-loads-together.ts';
import type { LoadResult } from '../load/loader.ts';
import { fetchedFields } from '../load/snapshot-row.ts';
import { recordIfUnchanged } from '../load/unchanged-alone.ts';
import { lastOkOf, UnchangedLists, type LastOk } from '../load/unchanged-lists.ts';

/**
 * What the batch did with a list it took: set aside as unchanged, gathered as a first load (`firstLoad`),
 * or, in a batch of one, recorded as unchanged at once (`applied`).
 */
export type Taken = Extract<LoadResult, { setAside: true }> | { applied: ApplyResult };

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
  /** What the run keeps until apply(); undefined in a batch of one, which read no last ok snapshot and keeps nothing. */
  readonly #kept: { unchanged: UnchangedLists; firstLoads: FirstLoadsTogether } | undefined;
  readonly #lastOk: ReadonlyMap<string, LastOk> | undefined;

  /** `lastOk`: the run's lists' last ok snapshots as it read them when it began (readLastOk). */
  constructor(lastOk: ReadonlyMap<string, LastOk>, firstLoads: FirstLoadsApply);
  /** A batch of one, which read no last ok snapshot (ApplyBatch.ofOne). */
  constructor();
  constructor(lastOk?: ReadonlyMap<string, LastOk>, firstLoads?: FirstLoadsApply) {
    this.#kept = lastOk && firstLoads && { unchanged: new UnchangedLists(lastOk), firstLoads: new FirstLoadsTogether(lastOk, firstLoads) };
    this.#lastOk = lastOk;
  }

  /**
   * The batch of a list synced on its own: it read no last ok snapshot, so each fetch may be
   * unchanged, and take() records it in one statement at once, or does not take it.
   */
  static ofOne(): ApplyBatch {
    return new ApplyBatch();
  }

  /** Whether the batch read its lists' last ok snapshots: only then is a served digest worth comparing with them. */
  get readLastOk(): boolean {
    return this.#kept !== undefined;
  }

  /** The target's entries at its last ok snapshot as the run read it; undefined for one never synced, or in a batch of one. */
  lastEntryCount(target: Target): number | undefined {
    return this.#lastOk && lastOkOf(this.#lastOk, target)?.entryCount;
  }

  /**
   * The target's last ok snapshot as the run read it, when the fetch's served digest is that
   * snapshot's (UnchangedLists#servedBefore): a fetch finished with it is taken as unchanged.
   */
  servedBefore(target: Target, servedDigest: string | null): SummedUp | undefined {
    return this.#kept?.unchanged.servedBefore(target, servedDigest);
  }

  /**
   * Takes a small fetched list into the batch, or not: set aside when its content hash is its last
   * ok snapshot's as the run read it, gathered when the run read no ok snapshot of it. In a batch of one,
   * which read none, it may be unchanged: recorded at once in one statement on the fetch's connection
   * `conn` (recordIfUnchanged, its run's progress counted with it when options.advanceRun says so).
   * Undefined when not taken: a list changed since (or, in a batch of one, not recorded by that
   * statement), to apply at once.
   */
  async take(conn: Connection, target: Target, collected: CollectedList, options: ApplyOptions): Promise<Taken | undefined> {
    if (!this.#kept) return recordIfUnchanged(conn, target, collected, options);
    if (this.#kept.unchanged.setAside(target, fetchedFields(collected, options))) return { setAside: true };
    if (this.#kept.firstLoads.gather(target, collected, options)) return { setAside: true, firstLoad: true };
    return undefined;
  }

  /**
   * The run's targets, of which those with no ok snapshot may yet be gathered (FirstLoadsTogether#expect):
   * returned, the run's possible first loads.
   */
  expect(targets: readonly Target[]): Target[] {
    return this.#kept?.firstLoads.expect(targets) ?? [];
  }

  /** A target's sync has ended, taken or not: the first loads gathered need not wait for it. */
  done(target: Target): void {
    this.#kept?.firstLoads.done(target);
  }

  /**
   * Writes what the batch took, once every gathered first load's apply has ended: the unchanged lists
   * in one statement on `db` (beside the first loads' last applies), as snapshots of run `runId`.
   * Nothing in a batch of one, whose list was written as it was taken, if at all.
   */
  async apply(db: Database, runId: number): Promise<BatchApplied> {
    if (!this.#kept) return { ids: new Map() };
    const loading = this.#kept.firstLoads.applied();
    const recorded = await this.#kept.unchanged.record(db, runId).then(
      (ids) => ({ ids }),
      (unrecorded: unknown) => ({ ids: new Map<Target, number | null>(), unrecorded }),
    );
    const ids = new Map([...recorded.ids, ...(await loading)]);
    return 'unrecorded' in recorded ? { ids, unrecorded: recorded.unrecorded } : { ids };
  }
}
