import type { Target } from '../catalog/targets.ts';
import type { Queryable } from '../db/database.ts';
import { targetIs, targetParams } from './sql.ts';

/** A snapshot of the target as a load compares with it. */
export interface PreviousSnapshot {
  id: number;
  status: string;
  contentHash: string | null;
  fields: string[] | null;
  /** Distinct entries fetched (null for a snapshot that fetched nothing). */
  entryCount: number | null;
}

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
}

/**
 * The one rule for "is this a first load?": the target has no ok snapshot and no current rows.
 * Both count, since rows left behind by a pruned history still make a resync.
 */
export function isFirstLoad(hasOkSnapshot: boolean, hasCurrentRows: boolean): boolean {
  return !hasOkSnapshot && !hasCurrentRows;
}

type SnapshotJson = { id: string | number; status: string; content_hash: string | null; fields: string[] | null; entry_count: number | null };

const snapshotColumns = 'id, status, content_hash, fields, entry_count';

/**
 * Reads the state: the clock and both snapshots in one round trip, and only without an ok snapshot
 * whether rows are current. That costs a second query on purpose: naming refdata.entries in a
 * statement locks it, even in a branch never run, and an unchanged sync must not wait on (or be
 * seen by) a lock on the entries or their views. Call it after the target's lock: a statement's
 * snapshot is taken when it starts, so in the lock's own statement it could miss the commit the
 * lock waited for.
 */
export async function readTargetState(q: Queryable, target: Target): Promise<TargetState> {
  const { rows } = await q.query<{ now: Date; last_ok: SnapshotJson | null; last: SnapshotJson | null }>(
    `select clock_timestamp() as now,
            (select to_jsonb(s) from (select ${snapshotColumns} from refdata.snapshots
               where ${targetIs()} and status = 'ok' order by id desc limit 1) s) as last_ok,
            (select to_jsonb(s) from (select ${snapshotColumns} from refdata.snapshots
               where ${targetIs()} order by id desc limit 1) s) as last`,
    targetParams(target),
  );
  const row = rows[0]!;
  const hasOk = row.last_ok !== null;
  // With an ok snapshot it is no first load, whatever the rows: they are asked about only without one.
  const firstLoad = hasOk ? false : isFirstLoad(false, await hasCurrentRows(q, target));
  const state: TargetState = { now: row.now, firstLoad };
  if (row.last_ok) state.lastOk = snapshotOf(row.last_ok);
  if (row.last) state.last = snapshotOf(row.last);
  return state;
}

async function hasCurrentRows(q: Queryable, target: Target): Promise<boolean> {
  const { rows } = await q.query<{ found: boolean }>(
    `select exists (select 1 from refdata.entries where ${targetIs()} and valid_to is null) as found`,
    targetParams(target),
  );
  return rows[0]?.found === true;
}

function snapshotOf(json: SnapshotJson): PreviousSnapshot {
  return { id: Number(json.id), status: json.status, contentHash: json.content_hash, fields: json.fields, entryCount: json.entry_count };
}
