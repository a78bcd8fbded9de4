import type { Target } from '../../catalog/targets.ts';
import type { Queryable } from '../../db/database.ts';
import { clockAndLastSnapshots, hasCurrentRows, lockThenLastSnapshots, type PreviousSnapshot } from '../sql.ts';

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
  /** A change of the list's views waits for objects of the user (src/columns/waiting-views.ts). */
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
 * Reads the state: the clock and both snapshots in one round trip, and only without an ok snapshot
 * whether rows are current. That costs a second query on purpose: naming refdata.entries in a
 * statement locks it, even in a branch never run, and an unchanged sync must not wait on (or be
 * seen by) a lock on the entries or their views. Read after the target's lock: a statement's
 * snapshot is taken when it starts, so in the lock's own statement it could miss the commit the
 * lock waited for. `lock` takes that lock first in the same round trip (refdata.lock_target_state,
 * whose read is a statement of its own); 'held' is for a caller that holds it already.
 */
export async function readTargetState(q: Queryable, target: Target, lock: 'take' | 'held'): Promise<TargetState> {
  const read = lock === 'take' ? await lockThenLastSnapshots(q, target) : await clockAndLastSnapshots(q, target);
  // With an ok snapshot it is no first load, whatever the rows: they are asked about only without one.
  const firstLoad = read.lastOk ? false : isFirstLoad(false, await hasCurrentRows(q, target));
  return { ...read, firstLoad };
}
