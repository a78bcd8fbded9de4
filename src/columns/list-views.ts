// The per-list views, generated from one definition: the contract's columns and comments
// (src/columns/view-descriptions.ts) plus the recorded typed columns. Used at migrate time and by the sync
// that changes a list's columns, inside its transaction.
import type { ListKey } from '../catalog/list-keys.ts';
import type { Queryable } from '../db/database.ts';
import { whenReaderExists } from '../db/reader-role.ts';
import { listHistoryView, listView, type RelationDescription } from './view-descriptions.ts';
import { createView, commentOnColumn, commentOnView, dropView, grantOn, grantSelectToReader, viewQuery, viewsColumns } from './view-sql.ts';
import { dropListFunctions, listFunctionNames, listFunctionsParams, listFunctionStatements } from './list-functions-sql.ts';
import type { TypedColumn } from './typed-column.ts';
import { ListFailure } from '../util/error-codes.ts';

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
