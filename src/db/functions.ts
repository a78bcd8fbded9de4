// Typed calls of the SQL functions data teams use (migration 0002), for the CLI and tests.
import type { Queryable } from './database.ts';
import { entriesAsOfQuery, chargeCodeVersionDiffQuery, entriesDiffQuery, chargeCodeVersionsQuery, codeUsageQuery, orphansQuery } from './functions-sql.ts';

export interface AsOfEntry {
  environment: string;
  list_key: string;
  variant: string;
  entry_key: string;
  code: string | null;
  description: string | null;
  payload: Record<string, unknown>;
  valid_from: Date;
  valid_to: Date | null;
}

export interface AsOfFilter {
  /** The carrier or charge-code version; every variant when absent. */
  variant?: string;
  /** Every environment when absent. */
  environment?: string;
}

/** refdata.entries_as_of: one list as it was at `at`. */
export async function entriesAsOf(db: Queryable, listKey: string, at: Date, filter: AsOfFilter = {}): Promise<AsOfEntry[]> {
  const { rows } = await db.query<AsOfEntry>(entriesAsOfQuery, [listKey, at.toISOString(), filter.variant ?? null, filter.environment ?? null]);
  return rows;
}

/** removed: only in version A; added: only in version B; modified: in both, payloads differ. */
export type VersionChange = 'added' | 'removed' | 'modified';

export interface VersionDiffRow {
  environment: string;
  code: string;
  change: VersionChange;
  description_a: string | null;
  description_b: string | null;
  payload_a: Record<string, unknown> | null;
  payload_b: Record<string, unknown> | null;
  /** Top-level payload fields whose values differ; null unless `modified`. */
  changed_fields: string[] | null;
}

/** refdata.charge_code_version_diff: current charge codes of version a against version b. */
export async function chargeCodeVersionDiff(db: Queryable, a: string, b: string, environment?: string): Promise<VersionDiffRow[]> {
  const { rows } = await db.query<VersionDiffRow>(chargeCodeVersionDiffQuery, [a, b, environment ?? null]);
  return rows;
}

export interface ListDiffRow {
  environment: string;
  list_key: string;
  variant: string;
  entry_key: string;
  change: VersionChange;
  code: string | null;
  description_before: string | null;
  description_after: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  /** Top-level payload fields whose values differ; null unless `modified`. */
  changed_fields: string[] | null;
}

/** refdata.entries_diff (migration 0008): one list at `from` against the same list at `to`. */
export async function entriesDiff(db: Queryable, listKey: string, from: Date, to: Date, filter: AsOfFilter = {}): Promise<ListDiffRow[]> {
  const { rows } = await db.query<ListDiffRow>(entriesDiffQuery, [
    listKey,
    from.toISOString(),
    to.toISOString(),
    filter.variant ?? null,
    filter.environment ?? null,
  ]);
  return rows;
}

export interface VersionCount {
  environment: string;
  version: string;
  count: number;
}

/** Current charge codes per environment and version: tells an unknown version from an equal one. */
export async function chargeCodeVersionCounts(db: Queryable, environment?: string): Promise<VersionCount[]> {
  const { rows } = await db.query<VersionCount>(chargeCodeVersionsQuery, [environment ?? null]);
  return rows;
}

export interface CodeUsage {
  code: string;
  rows: number;
  first_at: Date | null;
  last_at: Date | null;
  top: Array<{ value: string | null; rows: number }> | null;
}

/** What refdata.code_usage reads: a usage column and its optional time and grouping columns. */
export interface UsageRead {
  column: string;
  at?: string;
  groupBy?: string;
  recentDays: number;
}

/**
 * refdata.code_usage (migration 0007; 0016 counts the top values in one pass): the facts in one usage
 * column that hold each of `codes`, in use since `now` minus recentDays when the column has a time,
 * in one set-based query.
 */
export async function codeUsage(db: Queryable, usage: UsageRead, codes: string[], now: Date): Promise<CodeUsage[]> {
  const since = usage.at ? new Date(now.getTime() - usage.recentDays * 86_400_000) : null;
  const { rows } = await db.query<CodeUsage>(codeUsageQuery, [usage.column, codes, usage.at ?? null, since, usage.groupBy ?? null]);
  return rows.map((r) => ({ ...r, rows: Number(r.rows) }));
}

export interface Orphan {
  value: string;
  rows: number;
}

/** refdata.orphans (migration 0007): fact values that match no current entry (or none valid at `at`). */
export async function orphans(
  db: Queryable,
  column: string,
  listKey: string,
  variant: string,
  filter: { environment?: string; at?: Date } = {},
): Promise<Orphan[]> {
  const { rows } = await db.query<Orphan>(orphansQuery, [column, listKey, variant, filter.environment ?? null, filter.at?.toISOString() ?? null]);
  return rows.map((r) => ({ ...r, rows: Number(r.rows) }));
}
