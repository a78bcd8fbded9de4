// The recorded schema (refdata.list_columns) and its evolution: the columns of a list follow the
// fields and types its fetches serve, in the transaction that applies the fetch.
import type { ListKey } from '../catalog/list-keys.ts';
import type { Target } from '../catalog/targets.ts';
import type { Queryable } from '../db/database.ts';
import { listHistoryView } from './view-descriptions.ts';
import { nameNewFields } from './column-name.ts';
import type { ColumnType } from './column-type.ts';
import { conform, unfitting, type FieldValues } from './conformance.ts';
import { settleListViews, type ViewsSettled } from './waiting-views.ts';
import { readColumnsOfLists, type TypedColumn } from './typed-column.ts';
import { readerFunction, type ColumnShape } from './typed-sql.ts';
import { otherTargetsFit, insertAddedColumns, replaceColumn, insertColumn, touchColumns, lockListsColumns } from './columns-sql.ts';

/** One change of a list's columns, as the schema_changed alert reports it. */
export interface ColumnChange {
  field: string;
  column: string;
  change: 'added' | 'widened';
  from?: ColumnType;
  to: ColumnType;
}

/** What a plan starts from: the typed columns, and whether a change of the views waits; one round trip. */
async function readPlanInputs(q: Queryable, key: ListKey): Promise<{ recorded: TypedColumn[]; waiting: boolean }> {
  return (await readColumnsOfLists(q, [key])).get(key)!;
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
export async function planUnderColumnLocks<T>(
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
}

/**
 * Plans the recorded columns for the fields and values a fetch (or the stored history) showed: a
 * column for each new field, typed by its values; a recorded column keeps its type while any current
 * value of the field fits it (the others are nonconforming), and changes type only when none does,
 * in this fetch nor in the current rows of the list's other targets. A field the fetch lacks keeps
 * its column. Takes the list's column lock for the caller's transaction.
 *
 * The plan is first made on the columns as last committed, without the lock. Columns are only ever
 * added and widened, so a plan that changes nothing there has nothing to change under the lock
 * either, and takes it shared: the applies of one list that change no column (every source's first
 * load once one has recorded the list's columns, nearly every resync) no longer wait for each other,
 * where each held the list's lock to its commit. A plan that changes something takes the lock
 * exclusively, in a savepoint, and is made again under it. When another apply holds the lock
 * exclusive, it is most often making the same change (the first loads of many sources' large list
 * at once), so the lock is first waited for shared: if that apply made the change, the plan stands
 * under the shared lock; if not, the savepoint gives the lock back and it is taken exclusive. A plan
 * that changes nothing once it has the exclusive lock gives it back for the shared one.
 */
export async function planListColumns(q: Queryable, key: ListKey, observed: ReadonlyMap<string, FieldValues>, target?: PlanTarget): Promise<ColumnPlan> {
  const unlocked = await planOn(q, key, observed, target, await readPlanInputs(q, key), true);
  // Made again under the lock, for the columns and counts as they are until the commit. Under the
  // shared lock nothing may change: what another target's new rows would now call for waits for the
  // next sync of the list.
  return planUnderColumnLocks(q, [key], new Set(changes(unlocked) ? [key] : []), async (changing) => {
    const plan = await planOn(q, key, observed, target, await readPlanInputs(q, key), changing.has(key));
    return { plans: plan, changed: new Set(changes(plan) ? [key] : []) };
  });
}

/** Whether a plan changes the list's columns or views (and so takes the list's lock exclusive). */
export function changes(plan: ColumnPlan): boolean {
  return plan.changes.length > 0 || plan.viewsWaiting;
}

/** The plan on the given columns; without `mayChange` it adds and widens nothing and retries no waiting views. */
export async function planOn(
  q: Queryable,
  key: ListKey,
  observed: ReadonlyMap<string, FieldValues>,
  target: PlanTarget | undefined,
  inputs: { recorded: TypedColumn[]; waiting: boolean },
  mayChange: boolean,
): Promise<ColumnPlan> {
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
  const plan: ColumnPlan = { key, columns: [], added, widened: [], changes: [], nonconforming: 0, observedFields: [...observed.keys()], viewsWaiting: waiting };
  for (const a of added) plan.changes.push({ field: a.field, column: a.column, change: 'added', to: a.type });
  for (const c of recorded) {
    const values = observed.get(c.field);
    const met = values ? conform(c.type, values) : { type: c.type, nonconforming: 0 };
    let type = met.type;
    let nonconforming = met.nonconforming;
    if (met.changedKind && !(await othersFit(q, key, c.field, met.type, target))) {
      type = met.changedKind;
      nonconforming = 0;
    }
    // Without changes the recorded type stays, and the values that do not fit it are nonconforming.
    if (!mayChange && type !== c.type) {
      type = c.type;
      nonconforming = values ? unfitting(c.type, values) : 0;
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

/**
 * Records a plan in the caller's transaction and brings the views along, so they change exactly
 * when the data does: the new columns, the new types, and last_snapshot_id of the columns the fetch
 * served. A plan without changes (and no change waiting) costs no DDL and no lock on the views.
 * Views that objects of the user keep from being re-created wait (src/columns/waiting-views.ts).
 */
export async function applyColumnPlan(q: Queryable, plan: ColumnPlan, snapshotId: number | null, now: Date): Promise<ViewsSettled> {
  const { key } = plan;
  await recordAdded(q, [{ plan, snapshotId }], now);
  await recordWidened(q, plan, snapshotId, now);
  if (snapshotId !== null) {
    // The list's applies that change no column run side by side (planListColumns): a row another
    // one has just moved is left to it (SKIP LOCKED), where waiting would hold this apply until that
    // one commits. A row is moved only forward: FOR UPDATE checks the filter again on the version it
    // locks, so the latest snapshot wins whichever commits last.
    await q.query(touchColumns, [key, snapshotId, plan.observedFields]);
  }
  return changes(plan) ? settleListViews(q, key, plan.changes, snapshotId, now) : {};
}

/** Records the columns plans add, in one statement (none when they add none). */
export async function recordAdded(q: Queryable, plans: ReadonlyArray<{ plan: ColumnPlan; snapshotId: number | null }>, now: Date): Promise<void> {
  const added = plans.flatMap(({ plan, snapshotId }) => plan.added.map((a) => ({ key: plan.key, snapshotId, ...a })));
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
export async function recordWidened(q: Queryable, plan: ColumnPlan, snapshotId: number | null, now: Date): Promise<void> {
  for (const c of plan.widened) {
    await q.query(replaceColumn, [plan.key, c.field, now, snapshotId]);
    await q.query(insertColumn, [plan.key, c.field, c.column, c.position, c.type, snapshotId, now]);
  }
}

/** Plans and applies in one step: the columns of a list after a fetch (or the stored history). */
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
