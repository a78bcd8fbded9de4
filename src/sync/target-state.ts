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
 * Reads the state in one round trip (the clock, the two snapshots, whether rows are current). Call
 * it after the target's lock: a statement's snapshot is taken when it starts, so in the lock's own
 * statement it could miss the commit the lock waited for.
 */
export async function readTargetState(q: Queryable, target: Target): Promise<TargetState> {
  const { rows } = await q.query<{ now: Date; last_ok: SnapshotJson | null; last: SnapshotJson | null; has_rows: boolean }>(
    `select clock_timestamp() as now,
            (select to_jsonb(s) from (select ${snapshotColumns} from refdata.snapshots
               where ${targetIs()} and status = 'ok' order by id desc limit 1) s) as last_ok,
            (select to_jsonb(s) from (select ${snapshotColumns} from refdata.snapshots
               where ${targetIs()} order by id desc limit 1) s) as last,
            exists (select 1 from refdata.entries where ${targetIs()} and valid_to is null) as has_rows`,
    targetParams(target),
  );
  const row = rows[0]!;
  const state: TargetState = { now: row.now, firstLoad: isFirstLoad(row.last_ok !== null, row.has_rows) };
  if (row.last_ok) state.lastOk = snapshotOf(row.last_ok);
  if (row.last) state.last = snapshotOf(row.last);
  return state;
}

function snapshotOf(json: SnapshotJson): PreviousSnapshot {
  return { id: Number(json.id), status: json.status, contentHash: json.content_hash, fields: json.fields, entryCount: json.entry_count };
}
