// A column change whose views must be re-created while objects of the user depend on them waits:
// the recorded columns have it, the views keep theirs, refdata.list_views_waiting says so, and the
// first sync of the list after the dependents are gone (changed or not) applies it.
import type { ListKey } from '../catalog/list-keys.ts';
import type { Queryable } from '../db/database.ts';
import { reconcileListViews, reconcileViewsTogether } from './list-views.ts';
import type { ColumnChange } from './recorded-columns.ts';
import { readTypedColumns, type TypedColumn } from './typed-column.ts';
import { takeWaitingViews, putWaitingViews } from './columns-sql.ts';

/** A list's views waiting for objects of the user, and the column changes waiting with them. */
export interface WaitingViews {
  views: string[];
  dependents: string[];
  columns: ColumnChange[];
  since: Date;
  /** The wait began with this sync (else an earlier one began it). */
  began: boolean;
}

/** What settling a list's views did: they wait, or a change that waited was applied now (its columns). */
export interface ViewsUpdated {
  waiting?: WaitingViews;
  applied?: ColumnChange[];
}

/**
 * Brings the list's views to the recorded columns, in the caller's transaction under the list's
 * column lock: records the wait (adding `changes` to what waits) when objects of the user block
 * it, and clears a wait once the views could be brought along.
 */
export async function updateListViews(q: Queryable, key: ListKey, changes: ColumnChange[], snapshotId: number | null, now: Date): Promise<ViewsUpdated> {
  const reconciled = await reconcileListViews(q, key, await readTypedColumns(q, key));
  if (reconciled.waiting) return { waiting: await recordWait(q, key, { changes, snapshotId }, reconciled.waiting, now) };
  const { rows } = await q.query<{ columns: ColumnChange[] }>(takeWaitingViews, [[key]]);
  return rows[0] ? { applied: rows[0].columns } : {};
}

/** Records (or adds to) a list's wait for the objects of the user that keep its views from being re-created. */
async function recordWait(
  q: Queryable,
  key: ListKey,
  list: Pick<ListToUpdate, 'changes' | 'snapshotId'>,
  blocked: { views: string[]; dependents: string[] },
  now: Date,
): Promise<WaitingViews> {
  const { views, dependents } = blocked;
  const { rows } = await q.query<{ since: Date; columns: ColumnChange[]; began: boolean }>(putWaitingViews, [
    key,
    now,
    list.snapshotId,
    views,
    dependents,
    JSON.stringify(list.changes),
  ]);
  const row = rows[0]!;
  return { views, dependents, columns: row.columns, since: row.since, began: row.began };
}

/** One list's part in updateViewsTogether: its column changes, the snapshot they came with, its typed columns as recorded, whether a change of its views waited. */
export interface ListToUpdate {
  changes: ColumnChange[];
  snapshotId: number | null;
  typed: readonly TypedColumn[];
  waited: boolean;
}

/**
 * updateListViews of lists whose column changes were just recorded (recorded-columns.ts), in a few
 * statements for all: their views brought along together (reconcileViewsTogether), a wait recorded
 * for each list whose views objects of the user keep, and the waits that end taken off in one.
 */
export async function updateViewsTogether(q: Queryable, lists: ReadonlyMap<ListKey, ListToUpdate>, now: Date): Promise<Map<ListKey, ViewsUpdated>> {
  const settled = new Map<ListKey, ViewsUpdated>([...lists.keys()].map((key) => [key, {}]));
  if (lists.size === 0) return settled;
  const reconciled = await reconcileViewsTogether(q, new Map([...lists].map(([key, list]) => [key, list.typed])));
  const ended: ListKey[] = [];
  for (const [key, list] of lists) {
    const blocked = reconciled.get(key)!.waiting;
    if (blocked) settled.set(key, { waiting: await recordWait(q, key, list, blocked, now) });
    // Only a list whose plan saw a wait has one to end: a wait is recorded under the list's lock, held here.
    else if (list.waited) ended.push(key);
  }
  if (ended.length) {
    const { rows } = await q.query<{ list_key: ListKey; columns: ColumnChange[] }>(takeWaitingViews, [ended]);
    for (const r of rows) settled.set(r.list_key, { applied: r.columns });
  }
  return settled;
}

/** The snapshot's error while views wait: the change, the views, what depends on them, and what to do. */
export function waitingMessage(waiting: WaitingViews): string {
  const changes = waiting.columns.map((c) => (c.change === 'widened' ? `${c.column} ${c.from} → ${c.to}` : `new column ${c.column} ${c.to}`));
  const what = changes.length ? `the column change ${[...new Set(changes)].join(', ')}` : 'the new shape of the views';
  const they = waiting.dependents.length === 1 ? 'depends' : 'depend';
  return `${what} waits: ${waiting.views.join(' and ')} must be re-created, and ${waiting.dependents.join(', ')} ${they} on them (refsync never drops them); drop or change them, and the next sync applies it`;
}
