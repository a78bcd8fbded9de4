// The recorded schema (refdata.list_columns) and its evolution: the columns of a list follow the
// fields and types its fetches serve, in the transaction that applies the fetch. One planner and one
// recorder, for every fetch a transaction applies: a first load or a resync is a batch of one, a
// run's first loads applied together (src/sync/load/first-loads-together.ts) a batch of many, and a
// batch costs a few statements whatever its size: its lists' inputs read in one, their locks taken
// in one, the columns they add recorded in one, their last snapshot moved in one, and the views'
// DDL in one script (docs/performance.md, P1).
import type { ListKey } from '../catalog/list-keys.ts';
import type { Target } from '../catalog/targets.ts';
import type { Queryable } from '../db/database.ts';
import { listHistoryView } from './view-descriptions.ts';
import { nameNewFields } from './column-name.ts';
import type { ColumnType } from './column-type.ts';
import { conform, unfitting, type FieldValues } from './conformance.ts';
import { updateViewsTogether, type ListToUpdate, type ViewsUpdated } from './waiting-views.ts';
import { readColumnsOfLists, type TypedColumn } from './typed-column.ts';
import { readerFunction, type ColumnShape } from './typed-sql.ts';
import { otherTargetsFit, insertAddedColumns, replaceColumn, insertColumn, touchColumnsOfFetches, lockListsColumns } from './columns-sql.ts';

/** One change of a list's columns, as the schema_changed alert reports it. */
export interface ColumnChange {
  field: string;
  column: string;
  change: 'added' | 'widened';
  from?: ColumnType;
  to: ColumnType;
}

/**
 * Serialises the column changes of one list (its variants and environments share the views):
 * exclusive for a transaction that changes them, shared for one that only needs them to stay as they
 * are until it commits.
 */
export async function lockListColumns(q: Queryable, key: ListKey, mode: 'exclusive' | 'shared' = 'exclusive'): Promise<void> {
  // The one statement that names the lock (columns-sql.ts), for one list, waiting in either mode.
  await q.query(lockListsColumns, [[key], [mode === 'exclusive'], false]);
}

/**
 * Takes the lists' column locks as their plans want them and returns the plans made under them:
 * `changing` (the lists whose plan, made without the lock, changes their columns) locked exclusive,
 * the others shared, all in one statement. `planUnder` plans every list, each as changing when it is
 * in the set it is given, and says which lists its plans change. An exclusive lock another
 * transaction holds is first waited for shared: that transaction is most often making the same
 * change, and the plan then changes nothing and stands under the shared lock. Where the plans
 * still want another lock than they got, the locks are given back (a savepoint) and taken again as
 * the plans now want them, an exclusive one waited for.
 */
async function planUnderColumnLocks<T>(
  q: Queryable,
  keys: readonly ListKey[],
  changing: ReadonlySet<ListKey>,
  planUnder: (changing: ReadonlySet<ListKey>) => Promise<{ plans: T; changed: ReadonlySet<ListKey> }>,
): Promise<T> {
  if (changing.size) await q.query('savepoint list_columns');
  for (let first = true; ; first = false) {
    const { rows } = await q.query<{ list_key: ListKey; exclusive: boolean }>(lockListsColumns, [keys, keys.map((k) => changing.has(k)), first]);
    const exclusive = new Set(rows.filter((r) => r.exclusive).map((r) => r.list_key));
    // Planned as changing where wanted: a list held shared whose plan changes nothing has the plan it
    // would have under the shared lock (nothing added, widened or retried).
    const { plans, changed } = await planUnder(changing);
    if (changed.size === exclusive.size && [...changed].every((k) => exclusive.has(k))) return plans;
    await q.query('rollback to savepoint list_columns');
    changing = changed;
  }
}

/** The target whose fetch a plan is for: its own current rows are the fetch, the others are read. */
export interface PlanTarget {
  environment: string;
  variant: string;
}

export function planTarget(target: Target): PlanTarget {
  return { environment: target.source.environment, variant: target.variant };
}

/** What a fetch does to a list's columns, decided (under the list's lock) before anything is written. */
export interface ColumnPlan {
  key: ListKey;
  /** The typed columns as the views will have them, in view order. */
  columns: ColumnShape[];
  added: Array<ColumnShape & { position: number }>;
  widened: Array<ColumnShape & { position: number; from: ColumnType }>;
  /** What changed, as the schema_changed alert reports it; empty: no DDL. */
  changes: ColumnChange[];
  /** The fetch's values that do not fit their column's type. */
  nonconforming: number;
  observedFields: string[];
  /** A change of the list's views was waiting for objects of the user: retried with this plan. */
  viewsWaiting: boolean;
  /** The list's typed columns as read under its lock, before any plan of the batch: what recording the plans builds on. */
  recorded: readonly TypedColumn[];
}

/** One fetch whose columns are planned: its list, what it served, and its target (none: the stored history, at migrate time). */
export interface FetchToPlan {
  key: ListKey;
  observed: ReadonlyMap<string, FieldValues>;
  target?: PlanTarget;
}

/**
 * Plans the recorded columns for the fields and values fetches (or the stored history) showed, in
 * the order given: a later fetch of a list (another variant) plans on what an earlier one adds. A
 * column for each new field, typed by its values; a recorded column keeps its type while any current
 * value of the field fits it (the others are nonconforming), and changes type only when none does,
 * in this fetch nor in the current rows of the list's other targets. A field the fetch lacks keeps
 * its column. Takes the lists' column locks for the caller's transaction, in list order (two
 * transactions never wait for each other's), all in one statement.
 *
 * The plans are first made on the columns as last committed, without the locks. Columns are only
 * ever added and widened, so a list whose plans change nothing there has nothing to change under its
 * lock either, and takes it shared: the applies of one list that change no column (every source's
 * first load once one has recorded the list's columns, nearly every resync) do not wait for each
 * other, where each held the list's lock to its commit. A list whose plans change something takes
 * the lock exclusively, in a savepoint, and its plans are made again under it. When another apply
 * holds the lock exclusive, it is most often making the same change (the first loads of many
 * sources' large list at once), so the lock is first waited for shared: if that apply made the
 * change, the plans stand under the shared lock; if not, the savepoint gives the locks back and they
 * are taken as the plans now want them (planUnderColumnLocks).
 */
export async function planColumns(q: Queryable, fetches: readonly FetchToPlan[]): Promise<ColumnPlan[]> {
  const keys = [...new Set(fetches.map((f) => f.key))].sort();
  const unlocked = await planInOrder(q, fetches, await readColumnsOfLists(q, keys), new Set(keys));
  // Made again under the locks, for the columns and counts as they are until the commit. Under a
  // shared lock nothing may change: what another target's new rows would now call for waits for the
  // next sync of the list.
  return planUnderColumnLocks(q, keys, listsChanged(unlocked), async (changing) => {
    const plans = await planInOrder(q, fetches, await readColumnsOfLists(q, keys), changing);
    return { plans, changed: listsChanged(plans) };
  });
}

/** The lists whose plans change their columns or views (and so take their lock exclusive). */
const listsChanged = (plans: readonly ColumnPlan[]): Set<ListKey> => new Set(plans.filter(changes).map((p) => p.key));

/** Whether a plan changes the list's columns or views (and so takes the list's lock exclusive). */
export function changes(plan: ColumnPlan): boolean {
  return plan.changes.length > 0 || plan.viewsWaiting;
}

/** A typed column as planning reads it. */
type PlannedColumn = Pick<TypedColumn, 'field' | 'column' | 'type' | 'position'>;

/** The plans of the fetches in order, each on its list's columns as the plans before it leave them; a list not `changing` changes nothing. */
async function planInOrder(
  q: Queryable,
  fetches: readonly FetchToPlan[],
  read: ReadonlyMap<ListKey, { recorded: TypedColumn[]; waiting: boolean }>,
  changing: ReadonlySet<ListKey>,
): Promise<ColumnPlan[]> {
  const inputs = new Map<ListKey, { recorded: readonly PlannedColumn[]; waiting: boolean }>(read);
  const plans: ColumnPlan[] = [];
  for (const f of fetches) {
    const of = inputs.get(f.key)!;
    const plan = { ...(await planOn(q, f, of, changing.has(f.key))), recorded: read.get(f.key)!.recorded };
    plans.push(plan);
    // The views' wait is retried once per list: recording the plans takes it off or records it again.
    if (changes(plan)) inputs.set(f.key, { recorded: columnsAfter(plan, of.recorded, (a) => a), waiting: false });
  }
  return plans;
}

/** The plan of one fetch on the given columns; without `mayChange` it adds and widens nothing and retries no waiting views. */
async function planOn(
  q: Queryable,
  fetch: FetchToPlan,
  inputs: { recorded: readonly PlannedColumn[]; waiting: boolean },
  mayChange: boolean,
): Promise<Omit<ColumnPlan, 'recorded'>> {
  const { key, observed, target } = fetch;
  const { recorded } = inputs;
  const byField = new Map(recorded.map((c) => [c.field, c]));
  const newFields = mayChange ? [...observed.keys()].filter((f) => !byField.has(f)) : [];
  const reserved = listHistoryView(key).columns.map((c) => c.name);
  const names = nameNewFields(
    newFields,
    reserved,
    recorded.map((c) => c.column),
  );
  const first = recorded.reduce((max, c) => Math.max(max, c.position), 0) + 1;
  const added = [...names]
    .sort((a, b) => (a[1] < b[1] ? -1 : 1))
    .map(([field, column], i) => ({ field, column, type: observed.get(field)!.type, position: first + i }));
  const waiting = mayChange && inputs.waiting;
  const plan: Omit<ColumnPlan, 'recorded'> = {
    key,
    columns: [],
    added,
    widened: [],
    changes: [],
    nonconforming: 0,
    observedFields: [...observed.keys()],
    viewsWaiting: waiting,
  };
  for (const a of added) plan.changes.push({ field: a.field, column: a.column, change: 'added', to: a.type });
  for (const c of recorded) {
    const values = observed.get(c.field);
    const met = values ? conform(c.type, values) : { type: c.type, nonconforming: 0 };
    let type = met.type;
    let nonconforming = met.nonconforming;
    // Without changes the recorded type stays, and the values that do not fit it are nonconforming:
    // whether the list's other targets still fit it does not matter then.
    if (!mayChange) {
      type = c.type;
      nonconforming = values ? unfitting(c.type, values) : 0;
    } else if (met.changedKind && !(await othersFit(q, key, c.field, met.type, target))) {
      type = met.changedKind;
      nonconforming = 0;
    }
    plan.nonconforming += nonconforming;
    plan.columns.push({ field: c.field, column: c.column, type });
    if (type === c.type) continue;
    plan.widened.push({ field: c.field, column: c.column, type, position: c.position, from: c.type });
    plan.changes.push({ field: c.field, column: c.column, change: 'widened', from: c.type, to: type });
  }
  plan.columns.push(...added.map(({ field, column, type }) => ({ field, column, type })));
  return plan;
}

/** Whether a current value of the field in another target of the list still fits `type`. */
async function othersFit(q: Queryable, key: ListKey, field: string, type: ColumnType, target: PlanTarget | undefined): Promise<boolean> {
  const read = readerFunction(type);
  if (!target || !read) return false;
  const { rows } = await q.query<{ fits: boolean }>(otherTargetsFit(read), [key, target.environment, target.variant, field]);
  return rows[0]!.fits;
}

/** The columns as a plan leaves them: its widened types, then its added columns (`recordedAs`: an added column as the caller keeps it). */
function columnsAfter<C extends PlannedColumn>(plan: ColumnPlan, recorded: readonly C[], recordedAs: (added: PlannedColumn) => C): C[] {
  const widened = new Map(plan.widened.map((w) => [w.field, w.type]));
  return [
    ...recorded.map((c) => ({ ...c, type: widened.get(c.field) ?? c.type })),
    ...plan.added.map((a) => recordedAs({ field: a.field, column: a.column, type: a.type, position: a.position })),
  ];
}

/** A plan and the snapshot its fetch is recorded as (null: the stored history, at migrate time). */
export interface PlanToRecord {
  plan: ColumnPlan;
  snapshotId: number | null;
}

/**
 * Records plans (planColumns's, in their order, under the locks it took) in the caller's
 * transaction and brings the views along, so they change exactly when the data does: the new
 * columns, the new types, and last_snapshot_id of the columns each fetch served. Plans without
 * changes (and no change waiting) cost no DDL and no lock on the views. Views that objects of the
 * user keep from being re-created wait (src/columns/waiting-views.ts). Returns, for each plan that
 * changes its list's views, what settling them did.
 */
export async function recordColumns(q: Queryable, planned: readonly PlanToRecord[], now: Date): Promise<ViewsUpdated[]> {
  await recordAdded(q, planned, now);
  for (const { plan, snapshotId } of planned) await recordWidened(q, plan, snapshotId, now);
  // The list's applies that change no column run side by side (planColumns): a row another one has
  // just moved is left to it (SKIP LOCKED), where waiting would hold this apply until that one
  // commits. A row is moved only forward: FOR UPDATE checks the filter again on the version it
  // locks, so the latest snapshot wins whichever commits last.
  const touched = planned.flatMap(({ plan, snapshotId }) =>
    snapshotId === null ? [] : [{ list_key: plan.key, snapshot_id: snapshotId, fields: plan.observedFields }],
  );
  if (touched.length) await q.query(touchColumnsOfFetches, [JSON.stringify(touched)]);
  const settled = await updateViewsTogether(q, listsToUpdate(planned, now), now);
  return planned.map(({ plan }) => (changes(plan) ? settled.get(plan.key)! : {}));
}

/** Records the columns plans add, in one statement (none when they add none). */
async function recordAdded(q: Queryable, planned: readonly PlanToRecord[], now: Date): Promise<void> {
  const added = planned.flatMap(({ plan, snapshotId }) => plan.added.map((a) => ({ key: plan.key, snapshotId, ...a })));
  if (added.length === 0) return;
  await q.query(insertAddedColumns, [
    now,
    added.map((a) => a.key),
    added.map((a) => a.snapshotId),
    added.map((a) => a.field),
    added.map((a) => a.column),
    added.map((a) => a.position),
    added.map((a) => a.type),
  ]);
}

/** Records the columns a plan widens: the recorded one replaced, the wider one recorded in its place. */
async function recordWidened(q: Queryable, plan: ColumnPlan, snapshotId: number | null, now: Date): Promise<void> {
  for (const c of plan.widened) {
    await q.query(replaceColumn, [plan.key, c.field, now, snapshotId]);
    await q.query(insertColumn, [plan.key, c.field, c.column, c.position, c.type, snapshotId, now]);
  }
}

/**
 * The lists whose plans change their columns or views: all their plans' changes, the last snapshot
 * that changed them, their typed columns once every plan is recorded (as refdata.list_columns has
 * them now), and whether their views waited.
 */
function listsToUpdate(planned: readonly PlanToRecord[], now: Date): Map<ListKey, ListToUpdate> {
  const lists = new Map<ListKey, ListToUpdate>();
  for (const { plan, snapshotId } of planned) {
    if (!changes(plan)) continue;
    const list = lists.get(plan.key) ?? { changes: [], snapshotId, typed: plan.recorded, waited: false };
    const typed = columnsAfter(plan, list.typed, (a) => ({ ...a, since: now, sinceSnapshot: snapshotId }));
    lists.set(plan.key, { changes: [...list.changes, ...plan.changes], snapshotId, typed, waited: list.waited || plan.viewsWaiting });
  }
  return lists;
}

/** planColumns of one fetch. */
export async function planListColumns(q: Queryable, key: ListKey, observed: ReadonlyMap<string, FieldValues>, target?: PlanTarget): Promise<ColumnPlan> {
  return (await planColumns(q, [{ key, observed, target }]))[0]!;
}

/** recordColumns of one plan: what settling the list's views did. */
export async function applyColumnPlan(q: Queryable, plan: ColumnPlan, snapshotId: number | null, now: Date): Promise<ViewsUpdated> {
  return (await recordColumns(q, [{ plan, snapshotId }], now))[0]!;
}

/** One fetch among several of a transaction, with the snapshot it is recorded as. */
export interface FetchToRecord extends FetchToPlan {
  snapshotId: number;
}

/** A fetch's plan, and what settling its list's views did when the plan changed them. */
export interface RecordedColumns {
  plan: ColumnPlan;
  settled?: ViewsUpdated;
}

/** Plans and records the columns of a transaction's fetches, in the order given. */
export async function recordColumnsTogether(q: Queryable, fetches: readonly FetchToRecord[], now: Date): Promise<RecordedColumns[]> {
  const plans = await planColumns(q, fetches);
  const settled = await recordColumns(
    q,
    plans.map((plan, i) => ({ plan, snapshotId: fetches[i]!.snapshotId })),
    now,
  );
  return plans.map((plan, i) => (changes(plan) ? { plan, settled: settled[i]! } : { plan }));
}

/** Plans and records in one step: the columns of a list after a fetch (or the stored history). */
export async function evolveListColumns(
  q: Queryable,
  key: ListKey,
  observed: ReadonlyMap<string, FieldValues>,
  snapshotId: number | null,
  now: Date,
  target?: PlanTarget,
): Promise<ColumnPlan> {
  const plan = await planListColumns(q, key, observed, target);
  await applyColumnPlan(q, plan, snapshotId, now);
  return plan;
}
