// The typed columns' SQL on refdata.list_columns, refdata.list_views_waiting and the entries they
// are read from, by name (docs/architecture.md, "Where SQL lives"). The views and functions made
// per list are built below.
import type { ListKey } from '../catalog/list-keys.ts';
import { READER_ROLE, whenReaderExists } from '../db/reader-role.ts';
import type { ColumnType, TypedColumn, RelationDescription } from './typed-columns.ts';

/** A list's current typed columns with when each field was first recorded (`list`: the SQL naming the list). */
const typedColumnsOf = (list: string) => `select c.field, c.column_name, c.data_type, c.position, f.recorded_at as since, f.first_snapshot_id as since_snapshot
     from refdata.list_columns c
     cross join lateral (select recorded_at, first_snapshot_id from refdata.list_columns f
                         where f.list_key = c.list_key and f.field = c.field order by f.recorded_at, f.id limit 1) f
     where c.list_key = ${list} and c.replaced_at is null`;

/** The list's current typed columns with when each field was first recorded ($1: the list). */
export const TYPED_COLUMNS = typedColumnsOf('$1');

/** The same, in view order. */
export const typedColumnsInOrder = `${TYPED_COLUMNS}\n     order by c.position`;

/** One page of a list's entries' payloads, for the migrate-time backfill. */
export const entriesPayloadPage = 'select id, payload from refdata.entries where list_key = $1 and id > $2 order by id limit $3';

/** Lists synced ok that have no recorded columns yet. */
export const listsWithoutColumns = `select distinct list_key from refdata.snapshots where status = 'ok'
     except select list_key from refdata.list_columns`;

/**
 * What plans of lists' columns start from ($1: their keys): each list's typed columns and whether a
 * change of its views waits, a row per list and column (one with null columns for a list without
 * any), by list and position.
 */
export const planInputsOfLists = `select k.list_key, exists (select 1 from refdata.list_views_waiting w where w.list_key = k.list_key) as waiting, c.*
     from unnest($1::text[]) as k(list_key) left join lateral (${typedColumnsOf('k.list_key')}) c on true
     order by k.list_key, c.position`;

/**
 * The lists' column locks (lockListColumns), the only statement that names them: several at once,
 * in list order ($1: their keys; $2: whether each is wanted exclusive, else shared; $3: whether an
 * exclusive lock held by another transaction is waited for shared instead). Returns each list's key
 * and whether its lock is held exclusive.
 *
 * With $3, the lists of a fleet's first wave that all found no columns do not queue for the
 * exclusive lock one after another: the first adds the columns, the others wait for its commit
 * sharing the lock, and find nothing left to add (recorded-columns.ts#planColumns). Every lock,
 * tried or waited for, is taken in list order, so two such statements cannot wait for each other.
 * The locks are taken after the sort (volatile functions); a CASE evaluates its branches in order.
 */
export const lockListsColumns = `select k.list_key, case
       when not k.exclusive then pg_advisory_xact_lock_shared(hashtext('refsync.list_columns'), hashtext(k.list_key)) is null
       when not $3::bool then pg_advisory_xact_lock(hashtext('refsync.list_columns'), hashtext(k.list_key)) is not null
       when pg_try_advisory_xact_lock(hashtext('refsync.list_columns'), hashtext(k.list_key)) then true
       else pg_advisory_xact_lock_shared(hashtext('refsync.list_columns'), hashtext(k.list_key)) is null end as exclusive
     from unnest($1::text[], $2::bool[]) as k(list_key, exclusive) order by k.list_key`;

/**
 * Moves the current columns the fetches served to their snapshot ($1: JSON of list_key, snapshot_id,
 * fields each), only forward: a column several fetches of one list served moves to the latest of
 * their snapshots, and a row another transaction is moving is left to it (SKIP LOCKED).
 */
export const touchColumnsOfFetches = `update refdata.list_columns c set last_snapshot_id = moved.snapshot_id
       from (select lc.id, w.snapshot_id
             from (select lc.id, max(t.snapshot_id) as snapshot_id
                   from jsonb_to_recordset($1::jsonb) as t(list_key text, snapshot_id bigint, fields text[])
                   join refdata.list_columns lc on lc.list_key = t.list_key and lc.replaced_at is null and lc.field = any(t.fields)
                   group by lc.id) w
             join refdata.list_columns lc on lc.id = w.id
             where lc.last_snapshot_id is null or lc.last_snapshot_id < w.snapshot_id
             for update of lc skip locked) moved
       where c.id = moved.id`;

/** Whether every current value of a field in the list's other targets fits a type. */
export const otherTargetsFit = (read: string): string =>
  `select exists (select 1 from refdata.entries
       where list_key = $1 and valid_to is null and not (environment = $2 and variant = $3)
         and ${read}(payload -> $4) is not null) as fits`;

/** Records the columns plans add ($1: when; then a list key, snapshot id, field, column, position and type each). */
export const insertAddedColumns = `insert into refdata.list_columns (list_key, field, column_name, position, data_type, first_snapshot_id, last_snapshot_id, recorded_at)
       select f.list_key, f.field, f.column_name, f.position, f.data_type, f.snapshot_id, f.snapshot_id, $1::timestamptz
       from unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::int[], $7::text[]) as f(list_key, snapshot_id, field, column_name, position, data_type)`;

/** Marks a recorded column replaced. */
export const replaceColumn = `update refdata.list_columns set replaced_at = $3, last_snapshot_id = coalesce($4, last_snapshot_id)
       where list_key = $1 and field = $2 and replaced_at is null`;

/** Records one column. */
export const insertColumn = `insert into refdata.list_columns (list_key, field, column_name, position, data_type, first_snapshot_id, last_snapshot_id, recorded_at)
       values ($1, $2, $3, $4, $5, $6, $6, $7)`;

/** Takes lists' waiting changes of their views off the wait ($1: their keys). */
export const takeWaitingViews = 'delete from refdata.list_views_waiting where list_key = any($1::text[]) returning list_key, columns';

/** Records a list's change of its views as waiting. */
export const putWaitingViews = `insert into refdata.list_views_waiting as w (list_key, since, snapshot_id, views, dependents, columns)
     values ($1, $2, $3, $4, $5, $6::jsonb)
     on conflict (list_key) do update set snapshot_id = coalesce(excluded.snapshot_id, w.snapshot_id), views = excluded.views,
       dependents = excluded.dependents, columns = w.columns || excluded.columns
     returning since, columns, (xmax = 0) as began`;

// ── The typed functions of each list ──
// The typed functions of each list, over refdata.<list>_history:
// - refdata.<list>_as_of(p_at, p_variant, p_environment, p_extend_back): the list as it was at p_at;
// - refdata.<list>_diff(p_from, p_to, p_variant, p_environment): what changed between two times,
//   the versions before and after as whole typed rows, so their columns sit side by side.
// Both use the view's row type, so they are typed exactly like it and follow it when columns are
// appended; a view re-created for a type change drops them first and creates them again after.
// Their SQL is built here, by name (docs/architecture.md, "Where SQL lives"); src/columns/recorded-columns.ts runs it.

export const asOfFunctionName = (key: ListKey): string => `${key}_as_of`;
/** The names of the list's typed functions, whose dependents count as the history view's. */
export const listFunctionNames = (key: ListKey): string[] => [asOfFunctionName(key), `${key}_diff`];
const signature = (key: ListKey) => `refdata.${ident(asOfFunctionName(key))}(timestamptz, text, text, boolean)`;
const diffSignature = (key: ListKey) => `refdata.${ident(`${key}_diff`)}(timestamptz, timestamptz, text, text)`;

/**
 * The variant parameter. charge_codes_as_of existed before the typed functions, with p_version
 * defaulting to 'unpinned'; it keeps both, so that existing calls read the same rows.
 */
function variantParameter(key: ListKey): { name: string; fallback: string } {
  return key === 'charge_codes' ? { name: 'p_version', fallback: "'unpinned'" } : { name: 'p_variant', fallback: 'NULL' };
}

/**
 * The function, its comment and grants. Plain SQL, STABLE, without SET or SECURITY DEFINER: the
 * planner inlines it, so a LATERAL join per fact reads the entries indexes. p_extend_back lets a
 * time before the list's first sync read the versions that first sync recorded (strict when false,
 * the default: before the first sync the list is empty).
 */
function asOfFunctionStatements(key: ListKey, variantColumn: string): string[] {
  const history = `refdata.${ident(`${key}_history`)}`;
  const fn = `refdata.${ident(asOfFunctionName(key))}`;
  const variant = variantParameter(key);
  return [
    `CREATE OR REPLACE FUNCTION ${fn}(
  p_at timestamptz,
  ${variant.name} text DEFAULT ${variant.fallback},
  p_environment text DEFAULT NULL,
  p_extend_back boolean DEFAULT false
)
RETURNS SETOF ${history}
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $fn$
  SELECT h.*
  FROM ${history} h
  WHERE (${variant.name} IS NULL OR h.${ident(variantColumn)} = ${variant.name})
    AND (p_environment IS NULL OR h.environment = p_environment)
    AND (h.valid_to IS NULL OR h.valid_to > p_at)
    AND (h.valid_from <= p_at OR (p_extend_back AND EXISTS (
      SELECT 1 FROM refdata.entries e
      WHERE e.environment = h.environment AND e.list_key = ${literal(key)} AND e.variant = h.${ident(variantColumn)}
        AND e.entry_key = h.entry_key AND e.valid_from = h.valid_from
        AND e.first_snapshot_id = (
          SELECT min(s.id) FROM refdata.snapshots s
          WHERE s.environment = e.environment AND s.list_key = e.list_key AND s.variant = e.variant AND s.status = 'ok'))))
$fn$`,
    `COMMENT ON FUNCTION ${signature(key)} IS ${literal(
      `The rows of refdata.${key}_history valid at p_at (valid_from <= p_at < valid_to), typed columns included: the list ${key} as it was then. ${variant.name} (${variantColumn}; default ${variant.fallback === 'NULL' ? 'every one' : variant.fallback}) and p_environment narrow it. p_extend_back: for a time before the list's first sync (refdata.list_sync_times.first_synced_at), read the versions that first sync recorded instead of nothing. Example: from facts f cross join lateral refdata.${key}_as_of(f.at) x where x.code = f.code.`,
    )}`,
    `REVOKE EXECUTE ON FUNCTION ${signature(key)} FROM PUBLIC`,
    whenReaderExists([`GRANT EXECUTE ON FUNCTION ${signature(key)} TO ${READER_ROLE}`]),
  ];
}

/**
 * refdata.<list>_diff: the list at p_from against the list at p_to (default now), one row per entry
 * added, removed or modified, with `before` and `after` as typed rows of refdata.<list>_history:
 * `select change, (before).length_ft, (after).length_ft from refdata.equipment_types_diff(...)`.
 */
function diffFunctionStatements(key: ListKey, variantColumn: string): string[] {
  const history = `refdata.${ident(`${key}_history`)}`;
  const asOf = `refdata.${ident(asOfFunctionName(key))}`;
  const v = ident(variantColumn);
  return [
    `CREATE OR REPLACE FUNCTION refdata.${ident(`${key}_diff`)}(
  p_from timestamptz,
  p_to timestamptz DEFAULT now(),
  p_variant text DEFAULT NULL,
  p_environment text DEFAULT NULL
)
RETURNS TABLE (environment text, ${v} text, entry_key text, change text, changed_fields text[], before ${history}, after ${history})
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $fn$
  SELECT coalesce(a.environment, b.environment), coalesce(a.${v}, b.${v}), coalesce(a.entry_key, b.entry_key),
    CASE WHEN a.entry_key IS NULL THEN 'added' WHEN b.entry_key IS NULL THEN 'removed' ELSE 'modified' END,
    CASE WHEN a.entry_key IS NOT NULL AND b.entry_key IS NOT NULL THEN refdata.changed_fields(a.payload, b.payload) END,
    CASE WHEN a.entry_key IS NULL THEN NULL ELSE a END,
    CASE WHEN b.entry_key IS NULL THEN NULL ELSE b END
  FROM ${asOf}(p_from, p_variant, p_environment) a
  FULL JOIN ${asOf}(p_to, p_variant, p_environment) b
    ON b.environment = a.environment AND b.${v} = a.${v} AND b.entry_key = a.entry_key
  WHERE a.entry_key IS NULL OR b.entry_key IS NULL OR a.payload IS DISTINCT FROM b.payload
$fn$`,
    `COMMENT ON FUNCTION ${diffSignature(key)} IS ${literal(
      `What changed in ${key} between p_from and p_to (default now): change is added, removed or modified, changed_fields the top-level fields whose values differ, before and after the versions as typed rows of refdata.${key}_history, so their columns sit side by side. Example: select entry_key, change, (before).description, (after).description from refdata.${key}_diff('2026-03-01', '2026-06-01').`,
    )}`,
    `REVOKE EXECUTE ON FUNCTION ${diffSignature(key)} FROM PUBLIC`,
    whenReaderExists([`GRANT EXECUTE ON FUNCTION ${diffSignature(key)} TO ${READER_ROLE}`]),
  ];
}

/** Both typed functions of a list, as statements. */
export function listFunctionStatements(key: ListKey, variantColumn: string): string[] {
  return [...asOfFunctionStatements(key, variantColumn), ...diffFunctionStatements(key, variantColumn)];
}

/** Dropped before its history view is re-created: the functions hold the view's row type. */
export function dropListFunctions(key: ListKey): string {
  return `DROP FUNCTION IF EXISTS ${diffSignature(key)}, ${signature(key)}`;
}

/** The parameters by which viewsColumns (below) says which lists' two typed functions both exist: the lists and their functions' signatures. */
export function listFunctionsParams(keys: readonly ListKey[]): [readonly ListKey[], string[], string[]] {
  return [keys, keys.map(signature), keys.map(diffSignature)];
}

// ── A typed column read out of a payload ──
// The SQL that reads a typed column out of an entry's payload. Each type other than jsonb reads
// through refdata.as_<type>(value) (migrations/0009_schema_contracts.sql), which returns NULL for a
// value that does not fit the type instead of failing the cast: a typed column never makes a read
// of its view fail, and the values that do not fit are listed in the view's nonconforming column.

export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
export const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** A column's field, type and name: what its SQL needs. */
export interface ColumnShape {
  field: string;
  column: string;
  type: ColumnType;
}

/** The function that reads a value as `type`, NULL when it does not fit; none for types every value fits. */
export function readerFunction(type: ColumnType): string | undefined {
  return type === 'jsonb' || type === 'null' ? undefined : `refdata.as_${type}`;
}

/** The expression of a typed column: the field's JSON value read as the column's type. */
export function typedExpression(c: ColumnShape, payload = 'payload'): string {
  const value = `${payload} -> ${literal(c.field)}`;
  if (c.type === 'jsonb') return value;
  if (c.type === 'null') return `${payload} ->> ${literal(c.field)}`;
  return `${readerFunction(c.type)}(${value})`;
}

/**
 * The nonconforming column: a JSON object of column name → value as served, for the values that do
 * not fit their column's type; NULL when the entry has none. Built by concatenation, not
 * jsonb_build_object, whose 100 arguments would cap the number of columns. Each term is a call of
 * refdata.nonconforming_<type> (migrations/0017_nonconforming_functions.sql), which Postgres inlines
 * where the view is read: spelled out here, the terms were most of a view's stored definition, which
 * each replace of the view parses, compresses and reads back.
 */
export function nonconformingExpression(columns: readonly ColumnShape[], payload = 'payload'): string {
  const parts = columns
    .filter((c) => readerFunction(c.type))
    .map((c) => `refdata.nonconforming_${c.type}(${literal(c.column)}, ${payload} -> ${literal(c.field)})`);
  return parts.length ? `nullif(${parts.join(' || ')}, '{}'::jsonb)` : 'NULL::jsonb';
}

// ── The per-list views' DDL ──
// The per-list views' DDL, by name (docs/architecture.md, "Where SQL lives"): the SELECT of each
// view from its contract columns and typed columns, and the statements that create, comment, grant
// and drop it. src/columns/recorded-columns.ts decides which of them a list needs.

/** The SELECT of refdata.<list> (current rows) or refdata.<list>_history (every version). */
export function viewQuery(key: ListKey, relation: RelationDescription, typed: readonly TypedColumn[], history: boolean): string {
  const variant = relation.columns[1]!.name;
  const contract = ['environment', `variant AS ${variant}`, 'entry_key', 'code', 'description', 'payload', 'valid_from'];
  if (history) contract.push('valid_to');
  contract.push(`${nonconformingExpression(typed)} AS nonconforming`);
  const columns = [...contract, ...typed.map((c) => `${typedExpression(c)} AS ${ident(c.column)}`)];
  const from = history ? 'refdata.entries' : 'refdata.current_entries';
  return `SELECT ${columns.join(',\n       ')}\nFROM ${from}\nWHERE list_key = ${literal(key)}`;
}

/** CREATE (OR REPLACE) of view refdata.<view> as `query`. */
export const createView = (view: string, replace: boolean, query: string): string =>
  `CREATE ${replace ? 'OR REPLACE ' : ''}VIEW refdata.${ident(view)} AS\n${query}`;

export const dropView = (view: string): string => `DROP VIEW refdata.${ident(view)}`;

export const commentOnView = (view: string, description: string): string => `COMMENT ON VIEW refdata.${ident(view)} IS ${literal(description)}`;

export const commentOnColumn = (view: string, column: string, description: string): string =>
  `COMMENT ON COLUMN refdata.${ident(view)}.${ident(column)} IS ${literal(description)}`;

/** A grant read from the view's ACL (grantee already quoted), to give back after a re-create. */
export const grantOn = (view: string, privilege: string, grantee: string, grantable: boolean): string =>
  `GRANT ${privilege} ON refdata.${ident(view)} TO ${grantee}${grantable ? ' WITH GRANT OPTION' : ''}`;

export const grantSelectToReader = (view: string): string => `GRANT SELECT ON refdata.${ident(view)} TO ${READER_ROLE}`;

/**
 * The columns of views ($1: their qualified names), name and type (format_type) in order: a row per
 * column, one with a null name for a view without columns, `present` false for a missing view. On
 * the first view's rows only, `functions`: the lists ($2) whose two typed functions ($3, $4: their
 * signatures) both exist, read in the same round trip (listFunctionsParams, above). Not on every row:
 * there it would be most of the answer (18 lists' names on each of 300 rows) and of its time.
 * Each view's columns are read through pg_attribute's index (the OFFSET keeps the planner from
 * joining the whole catalog instead: a hash join over every column of the database took twice as long).
 */
export const viewsColumns = `select v.view, v.oid is not null as present, a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
       case when v.ord = 1 then
         array(select f.list_key from unnest($2::text[], $3::text[], $4::text[]) as f(list_key, as_of, diff)
               where to_regprocedure(f.as_of) is not null and to_regprocedure(f.diff) is not null) end as functions
     from unnest($1::text[]) with ordinality as n(view, ord)
     cross join lateral (select n.view, n.ord, to_regclass(n.view) as oid) v
     left join lateral (select c.attname, c.atttypid, c.atttypmod, c.attnum from pg_attribute c
                        where c.attrelid = v.oid and c.attnum > 0 and not c.attisdropped offset 0) a on true
     order by v.ord, a.attnum`;
