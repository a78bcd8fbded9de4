import type { SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import { chargeCodeVersionDiff, codeUsage } from '../db/functions.ts';

export interface PinChange {
  environment: string;
  code: string;
  /** removed: only in FROM; added: only in TO; modified: in both, with different fields. */
  change: 'removed' | 'added' | 'modified';
  /** Facts in use with the code, over every usage column that holds charge codes. */
  rows: number;
  changed_fields: string[] | null;
  description_from: string | null;
  description_to: string | null;
}

/**
 * What moves for one source's facts if charge codes pinned to `from` were pinned to `to`: the
 * version diff (refdata.charge_code_version_diff), each code weighted by the facts that use it
 * (one refdata.code_usage query per usage column). Most used first.
 */
export async function pinWhatIf(db: Queryable, source: SourceConfig, from: string, to: string, now: Date): Promise<PinChange[]> {
  const diff = await chargeCodeVersionDiff(db, from, to, source.environment);
  if (diff.length === 0) return [];
  const codes = diff.map((d) => d.code);
  const rowsOf = new Map<string, number>();
  // Every charge-code column counts, whatever version it names: the question is what a re-pin moves.
  for (const usage of (source.usage ?? []).filter((u) => u.list === 'charge_codes')) {
    for (const u of await codeUsage(db, usage, codes, now)) rowsOf.set(u.code, (rowsOf.get(u.code) ?? 0) + u.rows);
  }
  return diff
    .map((d) => ({
      environment: d.environment,
      code: d.code,
      change: d.change,
      rows: rowsOf.get(d.code) ?? 0,
      changed_fields: d.changed_fields,
      description_from: d.description_a,
      description_to: d.description_b,
    }))
    .sort((a, b) => b.rows - a.rows || a.code.localeCompare(b.code));
}
