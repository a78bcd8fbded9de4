// Typed calls of the SQL functions data teams use (migration 0002), for the CLI and tests.
import type { Queryable } from './database.ts';

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
  const { rows } = await db.query<AsOfEntry>(
    'select * from refdata.entries_as_of($1, $2, $3, $4) order by environment, variant, entry_key',
    [listKey, at.toISOString(), filter.variant ?? null, filter.environment ?? null],
  );
  return rows;
}

export type VersionChange = 'only_in_a' | 'only_in_b' | 'changed';

export interface VersionDiffRow {
  environment: string;
  code: string;
  change: VersionChange;
  description_a: string | null;
  description_b: string | null;
  payload_a: Record<string, unknown> | null;
  payload_b: Record<string, unknown> | null;
  /** Top-level payload fields whose values differ; null unless `changed`. */
  changed_fields: string[] | null;
}

/** refdata.charge_code_version_diff: current charge codes of version a against version b. */
export async function chargeCodeVersionDiff(db: Queryable, a: string, b: string, environment?: string): Promise<VersionDiffRow[]> {
  const { rows } = await db.query<VersionDiffRow>(
    'select * from refdata.charge_code_version_diff($1, $2, $3) order by environment, change, code',
    [a, b, environment ?? null],
  );
  return rows;
}

export interface VersionCount {
  environment: string;
  version: string;
  count: number;
}

/** Current charge codes per environment and version: tells an unknown version from an equal one. */
export async function chargeCodeVersionCounts(db: Queryable, environment?: string): Promise<VersionCount[]> {
  const { rows } = await db.query<VersionCount>(
    `select environment, version, count(*)::int as count
     from refdata.charge_codes
     where $1::text is null or environment = $1
     group by environment, version
     order by environment, version`,
    [environment ?? null],
  );
  return rows;
}
