import type { Target } from '../../catalog/catalog.ts';
import type { Queryable } from '../../db/database.ts';
import { clockAndLastSnapshots, hasCurrentRows, type PreviousSnapshot, type TargetStateRead } from '../sql.ts';

/** What a load must know of its target, read under the target's lock. */
export interface TargetState {
  /** The clock read after the lock, so times follow commit order even when transactions began out of order. */
  now: Date;
  /** The last ok snapshot: the state the current rows reflect. */
  lastOk?: PreviousSnapshot;
  /** The last snapshot of any status. */
  last?: PreviousSnapshot;
  /** Never loaded: see isFirstLoad. */
  firstLoad: boolean;
  /** A change of the list's views waits for objects of the user (src/columns/recorded-columns.ts). */
  viewsWaiting: boolean;
}

/**
 * The one rule for "is this a first load?": the target has no ok snapshot and no current rows.
 * Both count, since rows left behind by a pruned history still make a resync.
 */
export function isFirstLoad(hasOkSnapshot: boolean, hasCurrentRows: boolean): boolean {
  return !hasOkSnapshot && !hasCurrentRows;
}

/**
 * Reads the state of a target whose lock the caller holds: the clock and both snapshots in one
 * round trip (completeTargetState does the rest). Read after the lock's statement: a statement's
 * snapshot is taken when it starts, so in the lock's own statement it could miss the commit the
 * lock waited for (refdata.lock_target_state reads in a statement of its own, for the same reason).
 */
export async function readTargetState(q: Queryable, target: Target): Promise<TargetState> {
  return completeTargetState(q, target, await clockAndLastSnapshots(q, target));
}

/**
 * The state from the clock and snapshots read under the lock, and only without an ok snapshot
 * whether rows are current. That costs a second query on purpose: naming refdata.entries in a
 * statement locks it, even in a branch never run, and an unchanged sync must not wait on (or be
 * seen by) a lock on the entries or their views.
 */
export async function completeTargetState(q: Queryable, target: Target, read: TargetStateRead): Promise<TargetState> {
  // With an ok snapshot it is no first load, whatever the rows: they are asked about only without one.
  const firstLoad = read.lastOk ? false : isFirstLoad(false, await hasCurrentRows(q, target));
  return { ...read, firstLoad };
}
