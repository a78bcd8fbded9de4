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
import { typedColumnOf, type TypedColumn, type TypedColumnRow } from './typed-column.ts';
import { readerFunction, type ColumnShape } from './typed-sql.ts';
import {
  planInputs,
  planInputsOfLists,
  lockListsColumnsShared,
  otherTargetsFit,
  insertAddedColumns,
  replaceColumn,
  insertColumn,
  touchColumns,
  touchColumnsOfFetches,
} from './columns-sql.ts';

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
  const { rows } = await q.query<Partial<TypedColumnRow> & { waiting: boolean }>(planInputs, [key]);
  return { recorded: rows.filter((r) => r.field != null).map((r) => typedColumnOf(r as TypedColumnRow)), waiting: rows[0]?.waiting === true };
}

/** readPlanInputs of several lists, in one round trip. */
async function readPlanInputsOf(q: Queryable, keys: readonly ListKey[]): Promise<Map<ListKey, { recorded: TypedColumn[]; waiting: boolean }>> {
  const { rows } = await q.query<Partial<TypedColumnRow> & { list_key: ListKey; waiting: boolean }>(planInputsOfLists, [keys]);
  const inputs = new Map<ListKey, { recorded: TypedColumn[]; waiting: boolean }>();
  for (const r of rows) {
    const of = inputs.get(r.list_key) ?? { recorded: [], waiting: r.waiting };
    if (r.field != null) of.recorded.push(typedColumnOf(r as TypedColumnRow));
    inputs.set(r.list_key, of);
  }
  return inputs;
}

/**
 * Serialises the column changes of one list (its variants and environments share the views):
 * exclusive for a transaction that changes them, shared for one that only needs them to stay as they
 * are until it commits.
 */
export async function lockListColumns(q: Queryable, key: ListKey, mode: 'exclusive' | 'shared' = 'exclusive'): Promise<void> {
  const lock = mode === 'exclusive' ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared';
  await q.query(`select ${lock}(hashtext('refsync.list_columns'), hashtext($1))`, [key]);
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
 * exclusively, in a savepoint, and is made again under it; if the apply it waited for made the
 * change already (the variants of a list on their first sync, all at once), the savepoint gives the
 * lock back and the plan takes the shared one.
 */
export async function planListColumns(q: Queryable, key: ListKey, observed: ReadonlyMap<string, FieldValues>, target?: PlanTarget): Promise<ColumnPlan> {
  const changes = (plan: ColumnPlan) => plan.changes.length > 0 || plan.viewsWaiting;
  if (changes(await planOn(q, key, observed, target, await readPlanInputs(q, key), true))) {
    await q.query('savepoint list_columns');
    await lockListColumns(q, key, 'exclusive');
    const plan = await planOn(q, key, observed, target, await readPlanInputs(q, key), true);
    if (changes(plan)) return plan;
    await q.query('rollback to savepoint list_columns');
  }
  await lockListColumns(q, key, 'shared');
  // Made again under the lock, for the columns and counts as they are until the commit. Under the
  // shared lock nothing may change: what another target's new rows would now call for waits for the
  // next sync of the list.
  return planOn(q, key, observed, target, await readPlanInputs(q, key), false);
}

/** One fetch among several of a transaction whose columns are planned together (planColumnsTogether). */
export interface FetchToPlan {
  key: ListKey;
  observed: ReadonlyMap<string, FieldValues>;
  target: PlanTarget;
}

/**
 * Plans the columns of several fetches in one transaction, each as planListColumns would, in the
 * order given. A fetch that leaves its list's columns as they are (every list of a new source once
 * another source recorded it) costs no statement of its own: their inputs are read in one statement,
 * their shared locks taken in one, and the inputs read again under them in one. A fetch that may
 * change its list's columns, whose views wait, or one of whose values changed kind, is planned on its
 * own by planListColumns first (a later variant of its list then plans on what it recorded).
 * `applyPlan` records each plan of the second kind as it is made, before the next is planned.
 */
export async function planColumnsTogether(
  q: Queryable,
  fetches: readonly FetchToPlan[],
  applyPlan: (plan: ColumnPlan, i: number) => Promise<void>,
): Promise<ColumnPlan[]> {
  const plans: ColumnPlan[] = new Array(fetches.length);
  const before = await readPlanInputsOf(q, [...new Set(fetches.map((f) => f.key))]);
  const quick: number[] = [];
  for (const [i, f] of fetches.entries()) {
    if (leavesColumns(f.observed, before.get(f.key)!)) {
      quick.push(i);
      continue;
    }
    plans[i] = await planListColumns(q, f.key, f.observed, f.target);
    await applyPlan(plans[i]!, i);
  }
  if (quick.length === 0) return plans;
  const keys = [...new Set(quick.map((i) => fetches[i]!.key))];
  await q.query(lockListsColumnsShared, [keys]);
  // Made again under the locks, as planListColumns makes a plan under the shared lock.
  const under = await readPlanInputsOf(q, keys);
  for (const i of quick) {
    const f = fetches[i]!;
    plans[i] = await planOn(q, f.key, f.observed, f.target, under.get(f.key)!, false);
  }
  return plans;
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

/**
 * Records the last snapshot of the columns several fetches served, whose plans change nothing
 * (planColumnsTogether's), in one statement: as applyColumnPlan does for each.
 */
export async function touchColumnsTogether(q: Queryable, fetches: ReadonlyArray<{ plan: ColumnPlan; snapshotId: number }>): Promise<void> {
  if (fetches.length === 0) return;
  const rows = fetches.map(({ plan, snapshotId }) => ({ list_key: plan.key, snapshot_id: snapshotId, fields: plan.observedFields }));
  await q.query(touchColumnsOfFetches, [JSON.stringify(rows)]);
}

/** The plan on the given columns; without `mayChange` it adds and widens nothing and retries no waiting views. */
async function planOn(
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
  const { key, added } = plan;
  if (added.length) {
    await q.query(insertAddedColumns, [
      key,
      snapshotId,
      now,
      added.map((a) => a.field),
      added.map((a) => a.column),
      added.map((a) => a.position),
      added.map((a) => a.type),
    ]);
  }
  for (const c of plan.widened) {
    await q.query(replaceColumn, [key, c.field, now, snapshotId]);
    await q.query(insertColumn, [key, c.field, c.column, c.position, c.type, snapshotId, now]);
  }
  if (snapshotId !== null) {
    // The list's applies that change no column run side by side (planListColumns): a row another
    // one has just moved is left to it (SKIP LOCKED), where waiting would hold this apply until that
    // one commits. A row is moved only forward: FOR UPDATE checks the filter again on the version it
    // locks, so the latest snapshot wins whichever commits last.
    await q.query(touchColumns, [key, snapshotId, plan.observedFields]);
  }
  return plan.changes.length || plan.viewsWaiting ? settleListViews(q, key, plan.changes, snapshotId, now) : {};
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
