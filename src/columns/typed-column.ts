import type { ListKey } from '../catalog/list-keys.ts';
import type { Queryable } from '../db/database.ts';
import type { ColumnType } from './column-type.ts';

/** One typed column of a per-list view, as recorded in refdata.list_columns. */
export interface TypedColumn {
  /** The top-level field as the service serves it. */
  field: string;
  column: string;
  type: ColumnType;
  position: number;
  /** When the field was first recorded, and in which snapshot (null: inferred from stored history). */
  since: Date;
  sinceSnapshot: number | null;
}

export type TypedColumnRow = { field: string; column_name: string; data_type: ColumnType; position: number; since: Date; since_snapshot: string | null };

/** The list's current typed columns with when each field was first recorded, in view order ($1: the list). */
export const TYPED_COLUMNS = `select c.field, c.column_name, c.data_type, c.position, f.recorded_at as since, f.first_snapshot_id as since_snapshot
     from refdata.list_columns c
     cross join lateral (select recorded_at, first_snapshot_id from refdata.list_columns f
                         where f.list_key = c.list_key and f.field = c.field order by f.recorded_at, f.id limit 1) f
     where c.list_key = $1 and c.replaced_at is null`;

export function typedColumnOf(r: TypedColumnRow): TypedColumn {
  return {
    field: r.field,
    column: r.column_name,
    type: r.data_type,
    position: r.position,
    since: r.since,
    sinceSnapshot: r.since_snapshot === null ? null : Number(r.since_snapshot),
  };
}

/** The typed columns of a list as its views have them now, in view order. */
export async function readTypedColumns(q: Queryable, key: ListKey): Promise<TypedColumn[]> {
  const { rows } = await q.query<TypedColumnRow>(`${TYPED_COLUMNS}\n     order by c.position`, [key]);
  return rows.map(typedColumnOf);
}
