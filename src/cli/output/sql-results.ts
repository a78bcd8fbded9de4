// How `refsync sql` shows what each statement answered: a table like the other commands' (values
// shown exactly, see table.ts), or its JSON form.
import type { SqlResult } from '../../db/database.ts';
import { formatTable, type Cell } from './table.ts';

/** A value as one line of text: timestamps in ISO-8601, json as JSON, bytea as Postgres's hex. */
function cell(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString('hex')}`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Each statement's rows as a table with their count, or what a statement without rows did. */
export function sqlResultsText(results: readonly SqlResult[]): string {
  return results
    .map((r) => {
      if (r.columns.length === 0) return r.affectedRows === null ? 'ok' : `${r.affectedRows} ${r.affectedRows === 1 ? 'row' : 'rows'} affected`;
      const table = formatTable(
        r.columns,
        r.rows.map((row) => row.map(cell)),
      );
      return `${table}\n(${r.rows.length} ${r.rows.length === 1 ? 'row' : 'rows'})`;
    })
    .join('\n\n');
}

/** `--json`: one object per statement, each row an object of its columns (a repeated name keeps its last value). */
export function sqlResultsJson(results: readonly SqlResult[]): unknown {
  return results.map((r) => ({
    columns: r.columns,
    rows: r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c, row[i] ?? null]))),
    affected_rows: r.affectedRows,
  }));
}
