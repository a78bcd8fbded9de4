// The columns of several fetches recorded in one transaction, as each fetch on its own would record
// them (recorded-columns.ts): the first loads a run applies together (src/sync/load/first-loads-together.ts).
// One list on its own takes a dozen round trips to plan, lock, record and bring its views along; a
// first sync has 23 lists, and its tail after the last fetch was those round trips, one list after
// another (docs/performance.md, P1). Here they are a few statements for all the lists: their inputs
// read in one, their locks taken in one, the columns they add recorded in one, their last snapshot
// moved in one, and every view's DDL in one script.
import type { ListKey } from '../catalog/list-keys.ts';
import type { Queryable } from '../db/database.ts';
import { touchColumnsOfFetches } from './columns-sql.ts';
import { conform, type FieldValues } from './conformance.ts';
import { changes, planOn, planUnderColumnLocks, recordAdded, recordWidened, type ColumnPlan, type PlanTarget } from './recorded-columns.ts';
import { readColumnsOfLists, type TypedColumn } from './typed-column.ts';
import { settleViewsTogether, type ListToSettle, type ViewsSettled } from './waiting-views.ts';

/** One fetch among several of a transaction, with the snapshot it is recorded as. */
export interface FetchToRecord {
  key: ListKey;
  observed: ReadonlyMap<string, FieldValues>;
  target: PlanTarget;
  snapshotId: number;
}

/** A fetch's plan, and what settling its list's views did when the plan changed them. */
export interface RecordedColumns {
  plan: ColumnPlan;
  settled?: ViewsSettled;
}

type Inputs = Map<ListKey, { recorded: TypedColumn[]; waiting: boolean }>;

/**
 * Plans and records the columns of several fetches as planListColumns and applyColumnPlan would one
 * after the other, in the order given (a later variant of a list plans on what an earlier one adds).
 *
 * The lists whose columns a fetch may change (it shows a field or a kind of value they lack, or their
 * views wait) are locked exclusive, the others shared, and the plans made under the locks, as
 * planListColumns does for one list (planUnderColumnLocks). A lock waited for shared is most often
 * behind another source's first load adding the same columns (a fleet's first wave).
 */
export async function recordColumnsTogether(q: Queryable, fetches: readonly FetchToRecord[], now: Date): Promise<RecordedColumns[]> {
  const keys = [...new Set(fetches.map((f) => f.key))].sort();
  const before = await readColumnsOfLists(q, keys);
  const changing = new Set(fetches.filter((f) => !leavesColumns(f.observed, before.get(f.key)!)).map((f) => f.key));
  const { plans, after } = await planUnderColumnLocks(q, keys, changing, async (wanted) => {
    const planned = await planInOrder(q, fetches, await readColumnsOfLists(q, keys), wanted, now);
    return { plans: planned, changed: new Set(fetches.filter((_, i) => changes(planned.plans[i]!)).map((f) => f.key)) };
  });
  await recordAdded(
    q,
    plans.map((plan, i) => ({ plan, snapshotId: fetches[i]!.snapshotId })),
    now,
  );
  for (const [i, plan] of plans.entries()) await recordWidened(q, plan, fetches[i]!.snapshotId, now);
  // Moved only forward, rows another apply has just moved left to it: as applyColumnPlan's touch.
  const touched = fetches.map((f, i) => ({ list_key: f.key, snapshot_id: f.snapshotId, fields: plans[i]!.observedFields }));
  await q.query(touchColumnsOfFetches, [JSON.stringify(touched)]);
  const settled = await settleViewsTogether(q, listsToSettle(fetches, plans, after), now);
  return plans.map((plan, i) => (changes(plan) ? { plan, settled: settled.get(fetches[i]!.key) } : { plan }));
}

/**
 * The plans of the fetches in order, on the columns read under the locks: a list locked exclusive
 * may change, and what a fetch's plan adds or widens is what the next fetch of its list plans on.
 * `after`: the lists' typed columns once every plan is recorded, as refdata.list_columns will have them.
 */
async function planInOrder(
  q: Queryable,
  fetches: readonly FetchToRecord[],
  under: Inputs,
  changing: ReadonlySet<ListKey>,
  now: Date,
): Promise<{ plans: ColumnPlan[]; after: Inputs }> {
  const inputs: Inputs = new Map(under);
  const plans: ColumnPlan[] = [];
  for (const f of fetches) {
    const of = inputs.get(f.key)!;
    const plan = await planOn(q, f.key, f.observed, f.target, of, changing.has(f.key));
    plans.push(plan);
    // The views' wait is retried once per list: its settle below takes it off or records it again.
    if (changes(plan)) inputs.set(f.key, { recorded: columnsAfter(plan, of.recorded, f.snapshotId, now), waiting: false });
  }
  return { plans, after: inputs };
}

/**
 * The typed columns as a plan leaves them: its widened types, then its added columns, first recorded
 * now with this snapshot (a field is added only when the list has no column of it).
 */
function columnsAfter(plan: ColumnPlan, recorded: readonly TypedColumn[], snapshotId: number, now: Date): TypedColumn[] {
  const widened = new Map(plan.widened.map((w) => [w.field, w.type]));
  return [
    ...recorded.map((c) => ({ ...c, type: widened.get(c.field) ?? c.type })),
    ...plan.added.map((a) => ({ field: a.field, column: a.column, type: a.type, position: a.position, since: now, sinceSnapshot: snapshotId })),
  ];
}

/** The lists whose plans change their columns or views: their changes, last snapshot, typed columns, and whether their views waited. */
function listsToSettle(fetches: readonly FetchToRecord[], plans: readonly ColumnPlan[], after: Inputs): Map<ListKey, ListToSettle> {
  const lists = new Map<ListKey, ListToSettle>();
  for (const [i, plan] of plans.entries()) {
    if (!changes(plan)) continue;
    const f = fetches[i]!;
    // The list's first plan saw its views' wait as read under the lock (the later ones plan past it).
    const list = lists.get(f.key) ?? { changes: [], snapshotId: f.snapshotId, typed: after.get(f.key)!.recorded, waited: plan.viewsWaiting };
    lists.set(f.key, { ...list, changes: [...list.changes, ...plan.changes], snapshotId: f.snapshotId });
  }
  return lists;
}

/** Whether a fetch leaves its list's recorded columns as they are: no new field, no value of another kind, no views waiting. */
function leavesColumns(observed: ReadonlyMap<string, FieldValues>, inputs: { recorded: TypedColumn[]; waiting: boolean }): boolean {
  if (inputs.waiting) return false;
  const byField = new Map(inputs.recorded.map((c) => [c.field, c]));
  for (const [field, values] of observed) {
    const column = byField.get(field);
    if (!column || conform(column.type, values).changedKind) return false;
  }
  return true;
}
