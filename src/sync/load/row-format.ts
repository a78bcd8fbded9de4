import type { NormalizedEntry } from '../collect/normalize.ts';

/*
 * The two forms rows take to Postgres, shared by both loaders: COPY's text format for large
 * batches, and one unnest over array parameters for the rest (and for PGlite, which takes no COPY).
 */

const COPY_CHUNK_CHARS = 256 * 1024;
const copySpecial = /[\\\n\r\t]/;

/** A value in COPY's text format: backslash, newline, carriage return and tab escaped; null is \N. */
export function copyText(value: string | null): string {
  if (value === null) return '\\N';
  if (!copySpecial.test(value)) return value;
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** Rows in COPY's text format, in chunks; `prefix` (already in COPY text) starts every line. */
export function* copyChunks(rows: readonly NormalizedEntry[], prefix = ''): Generator<string> {
  let chunk = '';
  for (const r of rows) {
    chunk += `${prefix}${copyText(r.entryKey)}\t${copyText(r.code)}\t${copyText(r.description)}\t${copyText(r.payload)}\t${copyText(r.digest)}\n`;
    if (chunk.length >= COPY_CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** Rows to read in SQL: a relation with the columns ENTRY_ROW_COLUMNS. */
export interface RowSource {
  from: string;
  params: unknown[];
  /** Rows in it, identical duplicates included. */
  rows: number;
}

/** Rows held in memory as one unnest over five array parameters, numbered from `first`. */
export function unnestRows(rows: readonly NormalizedEntry[], first: number): RowSource {
  const $ = (i: number) => `$${first + i}`;
  return {
    from: `unnest(${$(0)}::text[], ${$(1)}::text[], ${$(2)}::text[], ${$(3)}::jsonb[], ${$(4)}::text[]) as s(entry_key, code, description, payload, entry_hash)`,
    params: [rows.map((r) => r.entryKey), rows.map((r) => r.code), rows.map((r) => r.description), rows.map((r) => r.payload), rows.map((r) => r.digest)],
    rows: rows.length,
  };
}
