import type { Target } from '../../catalog/targets.ts';
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

/**
 * Past this many characters of payloads the payloads go as a jsonb[] array, not as one jsonb
 * document: a jsonb value holds at most 256 MB, and 32 million characters of JSON text stay well
 * under it in any encoding. Held first loads and spills are far smaller.
 */
const PAYLOADS_IN_ONE_DOCUMENT_CHARS = 32 * 1024 * 1024;

/**
 * The rows' payloads as one parameter, and the set-returning call (for ROWS FROM, beside the other
 * columns' unnest) that yields them back in order as jsonb. Each payload is already JSON text, so
 * they go as one JSON array joined by commas: as a text[] array, node-postgres escaped every quote
 * and backslash of every payload and Postgres undid it before parsing each one (on 663 sandbox
 * entries, 0.9 ms of the client and about 1 ms more of Postgres per statement than the document's
 * 0.45 ms: docs/performance.md, P4).
 */
export function payloadsParam(
  payloads: readonly string[],
  param: string,
  documentChars = PAYLOADS_IN_ONE_DOCUMENT_CHARS,
): { call: string; value: string | readonly string[] } {
  let chars = payloads.length + 2;
  for (const p of payloads) chars += p.length;
  if (chars > documentChars) return { call: `unnest(${param}::jsonb[])`, value: payloads };
  return { call: `jsonb_array_elements(${param}::jsonb)`, value: `[${payloads.join(',')}]` };
}

/** Rows held in memory as one ROWS FROM over five parameters (four text arrays and the payloads), numbered from `first`. */
export function unnestRows(rows: readonly NormalizedEntry[], first: number): RowSource {
  const $ = (i: number) => `$${first + i}`;
  const payloads = payloadsParam(
    rows.map((r) => r.payload),
    $(3),
  );
  return {
    from: `rows from (unnest(${$(0)}::text[]), unnest(${$(1)}::text[]), unnest(${$(2)}::text[]), ${payloads.call}, unnest(${$(4)}::text[])) as s(entry_key, code, description, payload, entry_hash)`,
    params: [rows.map((r) => r.entryKey), rows.map((r) => r.code), rows.map((r) => r.description), payloads.value, rows.map((r) => r.digest)],
    rows: rows.length,
  };
}

/** The COPY text in front of each of a target's rows written by copyEntries (sql.ts): its target, its time and its snapshot, twice. */
export function entryCopyPrefix(target: Target, now: Date, snapshotId: number): string {
  return [target.source.environment, target.list.key, target.variant, now.toISOString(), snapshotId, snapshotId].map((v) => copyText(String(v))).join('\t');
}
