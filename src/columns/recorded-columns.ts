// The recorded schema (refdata.list_columns) and its evolution: the columns of a list follow the
// fields and types its fetches serve, in the transaction that applies the fetch.
import type { ListKey } from '../catalog/list-keys.ts';
import type { Queryable } from '../db/database.ts';
import { listHistoryView } from '../dbt/descriptions.ts';
import { nameNewFields } from './column-name.ts';
import { joinTypes, type ColumnType } from './column-type.ts';
import { reconcileListViews } from './list-views.ts';
import type { TypedColumn } from './typed-column.ts';

/** One change of a list's columns, as the schema_changed alert reports it. */
export interface ColumnChange {
  field: string;
  column: string;
  change: 'added' | 'widened';
  from?: ColumnType;
  to: ColumnType;
}

/** The typed columns of a list as its views have them now, in view order. */
export async function readTypedColumns(q: Queryable, key: ListKey): Promise<TypedColumn[]> {
  const { rows } = await q.query<{ field: string; column_name: string; data_type: ColumnType; position: number; since: Date; since_snapshot: string | null }>(
    `select c.field, c.column_name, c.data_type, c.position, f.recorded_at as since, f.first_snapshot_id as since_snapshot
     from refdata.list_columns c
     cross join lateral (select recorded_at, first_snapshot_id from refdata.list_columns f
                         where f.list_key = c.list_key and f.field = c.field order by f.recorded_at, f.id limit 1) f
     where c.list_key = $1 and c.replaced_at is null
     order by c.position`,
    [key],
  );
  return rows.map((r) => ({
    field: r.field,
    column: r.column_name,
    type: r.data_type,
    position: r.position,
    since: r.since,
    sinceSnapshot: r.since_snapshot === null ? null : Number(r.since_snapshot),
  }));
}

/** Serialises the column changes of one list (its variants and environments share the views). */
export async function lockListColumns(q: Queryable, key: ListKey): Promise<void> {
  await q.query(`select pg_advisory_xact_lock(hashtext('refsync.list_columns'), hashtext($1))`, [key]);
}

/**
 * Widens the recorded columns of a list by the types a fetch (or the stored history) showed, adds
 * a column for each new field, moves last_snapshot_id, and brings the views along. Runs in the
 * caller's transaction, so the views change exactly when the data does. A field the fetch lacks
 * keeps its column. Returns what changed (nothing: no DDL and no lock on the views).
 */
export async function evolveListColumns(
  q: Queryable,
  key: ListKey,
  observed: ReadonlyMap<string, ColumnType>,
  snapshotId: number | null,
  now: Date,
): Promise<ColumnChange[]> {
  await lockListColumns(q, key);
  const recorded = await readTypedColumns(q, key);
  const byField = new Map(recorded.map((c) => [c.field, c]));
  const changes: ColumnChange[] = [];
  const newFields = [...observed.keys()].filter((f) => !byField.has(f));
  const reserved = listHistoryView(key).columns.map((c) => c.name);
  const names = nameNewFields(newFields, reserved, recorded.map((c) => c.column));
  const added = [...names].sort((a, b) => (a[1] < b[1] ? -1 : 1));
  const first = recorded.reduce((max, c) => Math.max(max, c.position), 0) + 1;
  if (added.length) {
    await q.query(
      `insert into refdata.list_columns (list_key, field, column_name, position, data_type, first_snapshot_id, last_snapshot_id, recorded_at)
       select $1, f.field, f.column_name, $2::int + f.n::int - 1, f.data_type, $3::bigint, $3::bigint, $4::timestamptz
       from unnest($5::text[], $6::text[], $7::text[]) with ordinality as f(field, column_name, data_type, n)`,
      [key, first, snapshotId, now, added.map((a) => a[0]), added.map((a) => a[1]), added.map((a) => observed.get(a[0])!)],
    );
  }
  for (const [field, column] of added) changes.push({ field, column, change: 'added', to: observed.get(field)! });
  for (const c of recorded) {
    const seen = observed.get(c.field);
    if (seen === undefined) continue;
    const type = joinTypes(c.type, seen);
    if (type === c.type) continue;
    await q.query(
      `update refdata.list_columns set replaced_at = $3, last_snapshot_id = coalesce($4, last_snapshot_id)
       where list_key = $1 and field = $2 and replaced_at is null`,
      [key, c.field, now, snapshotId],
    );
    await q.query(
      `insert into refdata.list_columns (list_key, field, column_name, position, data_type, first_snapshot_id, last_snapshot_id, recorded_at)
       values ($1, $2, $3, $4, $5, $6, $6, $7)`,
      [key, c.field, c.column, c.position, type, snapshotId, now],
    );
    changes.push({ field: c.field, column: c.column, change: 'widened', from: c.type, to: type });
  }
  if (snapshotId !== null) {
    await q.query(
      `update refdata.list_columns set last_snapshot_id = $2
       where list_key = $1 and replaced_at is null and field = any($3::text[]) and last_snapshot_id is distinct from $2`,
      [key, snapshotId, [...observed.keys()]],
    );
  }
  if (changes.length) await reconcileListViews(q, key, await readTypedColumns(q, key));
  return changes;
}
