// Whether each usage column has an index that begins with it: what an operator pays on the
// database for the impact of a change. A sync that removes or modifies codes of a list counts the
// facts that use them inside the list's transaction (src/sync/impact.ts). With an index on the
// column that count reads the changed codes' facts alone; without one it scans the whole table,
// and on 10,000,000 facts that was three to five times the resync it belongs to (docs/performance.md,
// P5). Nothing tells an operator so until a sync is slow: the worker and `refsync sync` log it once
// at their start, and `refsync status` lists it, with the statement that adds the index.
import type { SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import { errorLine } from '../util/error-line.ts';
import type { Logger } from '../util/logger.ts';
import { usageIndexesQuery } from './usage-index-sql.ts';

/**
 * Below this size a table is read whole in about the time of an index range scan's round trips
 * (64 MiB: about a million narrow facts, tens of milliseconds), so its missing index is not worth a
 * warning.
 */
export const UNINDEXED_USAGE_MIN_BYTES = 64 * 1024 * 1024;

/** A usage column whose table is large enough to matter and has no index that begins with it. */
export interface UnindexedUsage {
  /** `schema.table.column`, as configured. */
  column: string;
  /** The table's size (its partitions' for a partitioned table). */
  bytes: number;
  /** The planner's estimate of its rows; 0 when it was never analysed. */
  rowsEstimate: number;
  /** The statement that adds the index: on (column, at) when the usage names `at`. */
  createIndex: string;
}

/**
 * The configured usage columns that have no index beginning with them, on tables of at least
 * `minBytes`. One catalog query for all of them; a column named by several sources (or lists) once.
 * A table or column that does not exist is not reported here: each sync's impact error names it.
 */
export async function unindexedUsage(db: Queryable, sources: readonly SourceConfig[], minBytes = UNINDEXED_USAGE_MIN_BYTES): Promise<UnindexedUsage[]> {
  const pairs = new Map<string, { column: string; at: string | null }>();
  for (const u of sources.flatMap((s) => s.usage ?? [])) pairs.set(`${u.column}\n${u.at ?? ''}`, { column: u.column, at: u.at ?? null });
  if (pairs.size === 0) return [];
  const wanted = [...pairs.values()];
  const { rows } = await db.query<{ column: string; bytes: number; rows_estimate: number; indexed: boolean; create_index: string }>(usageIndexesQuery, [
    wanted.map((p) => p.column),
    wanted.map((p) => p.at),
  ]);
  // A column indexed under one `at` is indexed under every other: the index begins with the column.
  const indexed = new Set(rows.filter((r) => r.indexed).map((r) => r.column));
  const unindexed = new Map<string, UnindexedUsage>();
  for (const r of rows) {
    if (indexed.has(r.column) || r.bytes < minBytes || unindexed.has(r.column)) continue;
    unindexed.set(r.column, { column: r.column, bytes: r.bytes, rowsEstimate: r.rows_estimate, createIndex: r.create_index });
  }
  return [...unindexed.values()];
}

/** What one unindexed usage column costs, and what adds its index, in one line. */
export function unindexedUsageLine(u: UnindexedUsage): string {
  const size = `${Math.round(u.bytes / 1024 / 1024).toLocaleString('en-US')} MiB`;
  const rows = u.rowsEstimate > 0 ? `, about ${Math.round(u.rowsEstimate).toLocaleString('en-US')} rows` : '';
  return (
    `usage column ${u.column} has no index that begins with it: a sync that removes or modifies its codes reads the whole table ` +
    `(${size}${rows}) inside that list's transaction; add one with ${u.createIndex}`
  );
}

/**
 * Logs each unindexed usage column once, as a warning. Never throws: the check is advice, and a
 * database that cannot answer it (or a role that cannot read the catalog) leaves a debug line only.
 */
export async function warnUnindexedUsage(db: Queryable, sources: readonly SourceConfig[], logger: Logger): Promise<void> {
  try {
    for (const u of await unindexedUsage(db, sources)) logger.warn({ column: u.column, createIndex: u.createIndex }, unindexedUsageLine(u));
  } catch (err) {
    logger.debug({ err: errorLine(err) }, 'usage columns: index check failed');
  }
}
