// The typed columns' SQL on refdata.list_columns, refdata.list_views_waiting and the entries they
// are read from, by name (docs/architecture.md, "Where SQL lives"). The views and functions made
// per list are built in view-sql.ts.

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
