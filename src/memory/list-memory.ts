/**
 * What a sync asks of the worker's memory budget (the rest of src/memory/): a list is large once its fetch has
 * received min(indexAfterEntries, spillThreshold) entries, before the index of its current rows is
 * read or a row spills, which is where its memory grows with its size. A small list never asks.
 */
export interface ListMemory {
  /** Whether the list holds a share of the budget (taken before the fetch, or by an earlier ask). */
  readonly admitted: boolean;
  /** The fetch has proved the list large: true if it may go on now, false if it must stop and wait. */
  admitNow(): boolean;
  /** Waits for the list's share; the fetch then starts again from its first page. */
  wait(signal?: AbortSignal): Promise<void>;
}

/** Thrown out of a fetch that proved large when the budget had no room: caught by syncTarget, never a failure. */
export class WaitForMemory extends Error {
  constructor() {
    super('the list is large and the memory budget is taken: waiting for a list in flight');
    this.name = 'WaitForMemory';
  }
}

/** The tuning that says when a list is large (src/sync/sync-target.ts). */
export interface LargeListTuning {
  indexAfterEntries: number;
  spillThreshold: number;
}

/** The entries after which a fetch counts as large (the tuning's first use of memory that grows with the list). */
export function largeListAfter(tuning: LargeListTuning): number {
  return Math.min(tuning.indexAfterEntries, tuning.spillThreshold);
}

/** Whether a list is large before its fetch proves it: its last sync had largeListAfter entries (undefined: never synced). */
export function knownLarge(lastEntries: number | undefined, tuning: LargeListTuning): boolean {
  return lastEntries !== undefined && lastEntries >= largeListAfter(tuning);
}
