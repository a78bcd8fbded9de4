// The SQL that reads a typed column out of an entry's payload. Each type other than jsonb reads
// through refdata.as_<type>(value) (migrations/0009_schema_contracts.sql), which returns NULL for a
// value that does not fit the type instead of failing the cast: a typed column never makes a read
// of its view fail, and the values that do not fit are listed in the view's nonconforming column.
import type { ColumnType } from './column-type.ts';

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
