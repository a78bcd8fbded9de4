import type { ListKey } from '../catalog/list-keys.ts';
import type { Queryable } from '../db/database.ts';
import type { ColumnType } from './column-type.ts';
import { planInputsOfLists, typedColumnsInOrder } from './columns-sql.ts';

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
  const { rows } = await q.query<TypedColumnRow>(typedColumnsInOrder, [key]);
  return rows.map(typedColumnOf);
}

/** Lists' typed columns in view order, and whether a change of their views waits: one round trip. */
export async function readColumnsOfLists(q: Queryable, keys: readonly ListKey[]): Promise<Map<ListKey, { recorded: TypedColumn[]; waiting: boolean }>> {
  const { rows } = await q.query<Partial<TypedColumnRow> & { list_key: ListKey; waiting: boolean }>(planInputsOfLists, [keys]);
  const inputs = new Map<ListKey, { recorded: TypedColumn[]; waiting: boolean }>();
  for (const r of rows) {
    const of = inputs.get(r.list_key) ?? { recorded: [], waiting: r.waiting };
    if (r.field != null) of.recorded.push(typedColumnOf(r as TypedColumnRow));
    inputs.set(r.list_key, of);
  }
  return inputs;
}
