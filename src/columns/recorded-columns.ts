// The recorded schema (refdata.list_columns) and its evolution: the columns of a list follow the
// fields and types its fetches serve, in the transaction that applies the fetch. One planner and one
// recorder, for every fetch a transaction applies: a first load or a resync is a batch of one, a
// run's first loads applied together (src/sync/batch/apply-batch.ts) a batch of many, and a
// batch costs a few statements whatever its size: its lists' inputs read in one, their locks taken
// in one, the columns they add recorded in one, their last snapshot moved in one, and the views'
// DDL in one script (docs/performance.md, P1).
import type { ListKey } from '../catalog/list-keys.ts';
import type { Target } from '../catalog/catalog.ts';
import type { Queryable } from '../db/database.ts';
import {
  listHistoryView,
  nameNewFields,
  type ColumnType,
  conform,
  unfitting,
  type FieldValues,
  readColumnsOfLists,
  type TypedColumn,
  listView,
  type RelationDescription,
  readTypedColumns,
} from './typed-columns.ts';
import {
  readerFunction,
  type ColumnShape,
  otherTargetsFit,
  insertAddedColumns,
  replaceColumn,
  insertColumn,
  touchColumnsOfFetches,
  lockListsColumns,
  createView,
  commentOnColumn,
  commentOnView,
  dropView,
  grantOn,
  grantSelectToReader,
  viewQuery,
  viewsColumns,
  dropListFunctions,
  listFunctionNames,
  listFunctionsParams,
  listFunctionStatements,
  takeWaitingViews,
  putWaitingViews,
} from './columns-sql.ts';
import { whenReaderExists } from '../db/reader-role.ts';
import { ListFailure } from '../util/error-codes.ts';

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
 * user keep from being re-created wait (below). Returns, for each plan that
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

// ── The per-list views ──
// The per-list views, generated from one definition: the contract's columns and comments
// (src/columns/typed-columns.ts) plus the recorded typed columns. Used at migrate time and by the sync
// that changes a list's columns, inside its transaction.

/** Lists' views as Postgres has them: their columns (null for a view that is missing), and the lists whose typed functions exist. */
interface ViewsAsTheyAre {
  columns: ReadonlyMap<string, Array<{ name: string; type: string }> | null>;
  functions: ReadonlySet<ListKey>;
}

/** The lists' views and typed functions as Postgres has them: one round trip. */
async function viewsAsTheyAre(q: Queryable, keys: readonly ListKey[]): Promise<ViewsAsTheyAre> {
  const views = keys.flatMap((k) => viewNames(k));
  const { rows } = await q.query<{ view: string; present: boolean; name: string | null; type: string | null; functions: ListKey[] }>(viewsColumns, [
    views.map((v) => `refdata.${v}`),
    ...listFunctionsParams(keys),
  ]);
  const columns = new Map<string, Array<{ name: string; type: string }> | null>(views.map((v) => [v, null]));
  for (const r of rows) {
    const view = r.view.slice('refdata.'.length);
    const of = columns.get(view) ?? [];
    if (r.present) columns.set(view, r.name === null ? of : [...of, { name: r.name, type: r.type! }]);
  }
  return { columns, functions: new Set(rows[0]?.functions ?? []) };
}

const formatTypes: Record<string, string> = { timestamptz: 'timestamp with time zone' };

/** The columns wanted, named and typed as existingColumns reads them (contract columns by name only). */
function wantedColumns(relation: RelationDescription): Array<{ name: string; type?: string }> {
  return relation.columns.map((c) => (c.dataType ? { name: c.name, type: formatTypes[c.dataType] ?? c.dataType } : { name: c.name }));
}

type Plan = 'none' | 'create' | 'replace' | 'recreate';

function plan(existing: Array<{ name: string; type: string }> | null, wanted: Array<{ name: string; type?: string }>): Plan {
  if (!existing) return 'create';
  const same = (i: number) => existing[i]!.name === wanted[i]!.name && (wanted[i]!.type === undefined || existing[i]!.type === wanted[i]!.type);
  const prefix = existing.length <= wanted.length && existing.every((_, i) => same(i));
  if (prefix) return existing.length === wanted.length ? 'none' : 'replace';
  return 'recreate';
}

/** A DROP the views' dependents prevent: a failure of the list, with what depends on the view. */
export class ViewDependencyError extends ListFailure {
  readonly code = 'view_dependency';
}

/** The grants on a view other than its owner's, as GRANT statements, to give back after a re-create. */
async function grantsOf(q: Queryable, view: string): Promise<string[]> {
  const { rows } = await q.query<{ grantee: string; privilege: string; grantable: boolean }>(
    `select case when a.grantee = 0 then 'PUBLIC' else quote_ident(r.rolname) end as grantee,
            a.privilege_type as privilege, a.is_grantable as grantable
     from pg_class c cross join lateral aclexplode(c.relacl) a left join pg_roles r on r.oid = a.grantee
     where c.oid = $1::regclass and a.grantee <> c.relowner`,
    [`refdata.${view}`],
  );
  return rows.map((r) => grantOn(view, r.privilege, r.grantee, r.grantable));
}

/** Objects of the user's that depend on the views (a view's own rule excluded), as kind and qualified name. */
async function dependentsOf(q: Queryable, views: string[], functions: string[]): Promise<string[]> {
  const { rows } = await q.query<{ what: string }>(
    `select distinct case c.relkind when 'v' then 'view' when 'm' then 'materialized view' else 'relation' end
              || ' ' || quote_ident(n.nspname) || '.' || quote_ident(c.relname) as what
     from pg_depend d
     join pg_rewrite r on d.classid = 'pg_rewrite'::regclass and r.oid = d.objid
     join pg_class c on c.oid = r.ev_class join pg_namespace n on n.oid = c.relnamespace
     where d.refclassid = 'pg_class'::regclass and d.refobjid = any($1::regclass[]) and c.oid <> all($1::regclass[])
     union
     select 'function ' || p.oid::regprocedure::text
     from pg_depend d join pg_proc p on d.classid = 'pg_proc'::regclass and p.oid = d.objid
     where d.refclassid = 'pg_class'::regclass and d.refobjid = any($1::regclass[])
     union
     select distinct 'view ' || quote_ident(n.nspname) || '.' || quote_ident(c.relname)
     from pg_depend d
     join pg_rewrite r on d.classid = 'pg_rewrite'::regclass and r.oid = d.objid
     join pg_class c on c.oid = r.ev_class join pg_namespace n on n.oid = c.relnamespace
     join pg_proc p on d.refclassid = 'pg_proc'::regclass and p.oid = d.refobjid
     where p.pronamespace = 'refdata'::regnamespace and p.proname = any($2::text[])
     order by 1`,
    [views.map((v) => `refdata.${v}`), functions],
  );
  return rows.map((r) => r.what);
}

/** One view and the least DDL that brings it to its definition. */
interface ViewStep {
  relation: RelationDescription;
  history: boolean;
  action: Plan;
  /** Columns the view already has as wanted: a replace keeps their comments, and the view's own and its grants. */
  kept: number;
}

/**
 * Runs one view's step: CREATE OR REPLACE when columns are only appended, DROP and CREATE when a
 * column's type changed (Postgres cannot change it in place), the re-created view getting back its
 * grants. The DROP never cascades: an object created since dependentsOf looked makes it fail, and
 * the list with it.
 */
async function runStep(q: Queryable, key: ListKey, typed: readonly TypedColumn[], step: ViewStep): Promise<void> {
  const view = step.relation.name;
  const grants = step.action === 'recreate' ? await grantsOf(q, view) : [];
  if (step.action === 'recreate') {
    try {
      if (step.history) await q.query(dropListFunctions(key));
      await q.query(dropView(view));
    } catch (err) {
      const e = err as { code?: string; detail?: string };
      if (e.code !== '2BP01') throw err;
      throw new ViewDependencyError(
        `refdata.${view} must be re-created to change a column's type, but other objects depend on it (${(e.detail ?? '').replace(/\n/g, '; ')}); drop or change them, then sync again`,
      );
    }
  }
  // The view, its comments and grants in one round trip.
  await q.script(stepStatements(key, typed, step, grants));
}

/** A create or replace step's statements: the view, and its comments and grants. */
function stepStatements(key: ListKey, typed: readonly TypedColumn[], step: ViewStep, grants: readonly string[]): string[] {
  const view = step.relation.name;
  const replace = step.action === 'replace';
  const definition = createView(view, replace, viewQuery(key, step.relation, typed, step.history));
  const commented = (c: { name: string; description: string }) => commentOnColumn(view, c.name, c.description);
  // CREATE OR REPLACE keeps the view's comments and grants, so a replace describes only the columns
  // it appends: re-writing the rest was about a tenth of a first sync's views' DDL (docs/performance.md,
  // P1).
  return replace
    ? [definition, ...step.relation.columns.slice(step.kept).map(commented)]
    : [
        definition,
        commentOnView(view, step.relation.description),
        ...step.relation.columns.map(commented),
        ...grants,
        whenReaderExists([grantSelectToReader(view)]),
      ];
}

/** The steps that bring a list's two views to its typed columns, from the views' columns as they are. */
function stepsOf(key: ListKey, typed: readonly TypedColumn[], existing: ReadonlyMap<string, Array<{ name: string; type: string }> | null>): ViewStep[] {
  const steps: ViewStep[] = [];
  for (const [relation, history] of [
    [listView(key, typed), false],
    [listHistoryView(key, typed), true],
  ] as const) {
    const columns = existing.get(relation.name) ?? null;
    const action = plan(columns, wantedColumns(relation));
    if (action !== 'none') steps.push({ relation, history, action, kept: action === 'replace' ? columns!.length : 0 });
  }
  return steps;
}

/** The names of a list's two views. */
const viewNames = (key: ListKey): string[] => [listView(key, []).name, listHistoryView(key, []).name];

/** What reconciling a list's views did: whether DDL ran, or which views wait for which dependents. */
export interface ViewsReconciled {
  changed: boolean;
  waiting?: { views: string[]; dependents: string[] };
}

/**
 * Brings refdata.<list>, refdata.<list>_history and the list's typed functions (<list>_as_of,
 * <list>_diff) to the recorded typed columns with the least DDL: nothing when their columns match
 * (no lock taken), after one round trip that reads them. When a view must be re-created and objects of the user depend on either (or on
 * the functions, which a re-created history view takes with it), nothing changes (the two views
 * keep the same columns) and the change waits: nothing of the user's is ever dropped. `asTheyAre`:
 * the views as already read with other lists' (reconcileViewsTogether), else read here.
 */
export async function reconcileListViews(q: Queryable, key: ListKey, typed: readonly TypedColumn[], asTheyAre?: ViewsAsTheyAre): Promise<ViewsReconciled> {
  const views = asTheyAre ?? (await viewsAsTheyAre(q, [key]));
  const steps = stepsOf(key, typed, views.columns);
  const recreated = steps.filter((s) => s.action === 'recreate').map((s) => s.relation.name);
  if (recreated.length) {
    const ownFunctions = steps.some((s) => s.history && s.action === 'recreate') ? listFunctionNames(key) : [];
    const dependents = await dependentsOf(q, recreated, ownFunctions);
    if (dependents.length) return { changed: false, waiting: { views: recreated.map((v) => `refdata.${v}`), dependents } };
  }
  for (const step of steps) await runStep(q, key, typed, step);
  // Re-declared after a re-created history view (its row type went with it) or when missing after an
  // upgrade. Columns only appended leave them as they are: they return the view's row type, which follows.
  const functions = steps.some((s) => s.history && s.action === 'recreate') || !views.functions.has(key);
  if (functions) await q.script(listFunctionStatements(key, listHistoryView(key, typed).columns[1]!.name));
  return { changed: steps.length > 0 || functions };
}

/**
 * reconcileListViews of several lists, in a few statements for all: their views' columns and
 * functions read in one statement, and the DDL of every list whose views need at most columns appended (a first
 * sync's lists, whose views migrate created with the contract's columns alone) in one script, where
 * each list took a dozen round trips. A list one of whose views must be re-created (a column's type
 * changed) is reconciled on its own after them, on the views as read here: what depends on it is
 * looked for first.
 */
export async function reconcileViewsTogether(q: Queryable, typedByKey: ReadonlyMap<ListKey, readonly TypedColumn[]>): Promise<Map<ListKey, ViewsReconciled>> {
  const asTheyAre = await viewsAsTheyAre(q, [...typedByKey.keys()]);
  const reconciled = new Map<ListKey, ViewsReconciled>();
  const recreating: ListKey[] = [];
  const statements: string[] = [];
  for (const [key, typed] of typedByKey) {
    const steps = stepsOf(key, typed, asTheyAre.columns);
    if (steps.some((s) => s.action === 'recreate')) {
      recreating.push(key);
      continue;
    }
    statements.push(...steps.flatMap((s) => stepStatements(key, typed, s, [])));
    const functions = !asTheyAre.functions.has(key);
    if (functions) statements.push(...listFunctionStatements(key, listHistoryView(key, typed).columns[1]!.name));
    reconciled.set(key, { changed: steps.length > 0 || functions });
  }
  await q.script(statements);
  for (const key of recreating) reconciled.set(key, await reconcileListViews(q, key, typedByKey.get(key)!, asTheyAre));
  return reconciled;
}

// ── Views that wait for their dependents ──
// A column change whose views must be re-created while objects of the user depend on them waits:
// the recorded columns have it, the views keep theirs, refdata.list_views_waiting says so, and the
// first sync of the list after the dependents are gone (changed or not) applies it.

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
 * updateListViews of lists whose column changes were just recorded (above), in a few
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
