import { ALERT_ENTRY_CAP, wantsAlert, writeAlert } from '../alerts/outbox.ts';
import type { Target } from '../catalog/catalog.ts';
import type { UsageColumn } from '../config/types.ts';
import { codeUsage, type CodeUsage } from '../db/functions.ts';
import type { Queryable } from '../db/database.ts';
import { alertFor } from '../alerts/alert-row.ts';
import { cutToBytes } from '../util/bounded-text.ts';
import { SNAPSHOT_ERROR_BYTES } from './sql.ts';
import { setImpactError, setChangesImpact, changedCodesOf } from './impact-sql.ts';

/** One code in use that a snapshot removed or modified, as one usage column sees it (CONTRACT.md). */
export interface ImpactItem {
  column: string;
  code: string;
  change: 'removed' | 'modified';
  rows: number;
  from: string | null;
  to: string | null;
  top: Array<{ value: string | null; rows: number }> | null;
}

/** The usage columns that hold codes of this target's list and variant. */
export function usageOf(target: Target): UsageColumn[] {
  return (target.source.usage ?? []).filter((u) => u.list === target.list.key && u.variant === target.variant);
}

/** How long one read of a user's fact table may take when REFSYNC_IMPACT_TIMEOUT_S is not set. */
export const DEFAULT_IMPACT_TIMEOUT_S = 5;

/**
 * Runs a read of the user's table under a savepoint: a missing table, a missing grant or a read
 * slower than the impact timeout fails that read only, and the snapshot's transaction goes on to
 * commit. The timeout is the savepoint's own (`set_config(..., true)` is `set local`): the
 * transaction holds the list's lock, so a slow or unindexed fact table must cost one impact error,
 * not minutes of the lock under the general statement timeout. A rollback to the savepoint undoes
 * the setting; after a release it is put back by hand.
 */
async function readUserTable<T>(tx: Queryable, timeoutS: number, read: () => Promise<T>): Promise<T> {
  await tx.query('savepoint refsync_usage');
  try {
    const { rows } = await tx.query<{ previous: string }>(
      "select current_setting('statement_timeout') as previous, set_config('statement_timeout', $1, true)",
      [`${Math.ceil(timeoutS * 1000)}ms`],
    );
    const result = await read();
    await tx.query('release savepoint refsync_usage');
    await tx.query("select set_config('statement_timeout', $1, true)", [rows[0]!.previous]);
    return result;
  } catch (err) {
    await tx.query('rollback to savepoint refsync_usage');
    throw err;
  }
}

function toItem(column: UsageColumn, change: ImpactItem['change'], u: CodeUsage): ImpactItem {
  return {
    column: column.column,
    code: u.code,
    change,
    rows: u.rows,
    from: u.first_at ? new Date(u.first_at).toISOString() : null,
    to: u.last_at ? new Date(u.last_at).toISOString() : null,
    top: u.top,
  };
}

/**
 * The impact of a snapshot's removed and modified codes on the facts that use them, written in the
 * snapshot's own transaction (the change rows, the alert and the data commit together): one
 * code_usage query per usage column, the result on each change row (entry_changes.impact) and, when
 * REFSYNC_ALERT_ON has it, one used_code_changed alert. Returns why a column could not be read.
 */
export async function recordImpact(tx: Queryable, target: Target, diff: string, snapshotId: number, now: Date): Promise<string | undefined> {
  const columns = usageOf(target);
  if (columns.length === 0) return undefined;
  const { rows: changed } = await tx.query<{ entry_key: string; code: string; change: ImpactItem['change'] }>(changedCodesOf(diff));
  if (changed.length === 0) return undefined;
  const changeOf = new Map(changed.map((c) => [c.code, c.change]));
  const codes = [...changeOf.keys()];

  const items: ImpactItem[] = [];
  const errors: string[] = [];
  const timeoutS = target.source.impactTimeoutS ?? DEFAULT_IMPACT_TIMEOUT_S;
  for (const column of columns) {
    try {
      const usage = await readUserTable(tx, timeoutS, () => codeUsage(tx, column, codes, now));
      for (const u of usage) items.push(toItem(column, changeOf.get(u.code)!, u));
    } catch (err) {
      // 57014: the statement was cancelled, here by the impact timeout.
      const reason =
        (err as { code?: unknown }).code === '57014'
          ? `the read took longer than ${timeoutS} s (REFSYNC_IMPACT_TIMEOUT_S)`
          : (err as Error).message.split('\n')[0];
      errors.push(`impact on ${column.column} not computed: ${reason}`);
    }
  }
  const error = errors.length ? cutToBytes(errors.join('; '), SNAPSHOT_ERROR_BYTES) : undefined;
  if (error) await tx.query(setImpactError, [snapshotId, error]);
  if (items.length === 0) return error;

  const perEntry = changed
    .map((c) => ({
      entry_key: c.entry_key,
      impact: items.filter((i) => i.code === c.code).map((i) => ({ column: i.column, rows: i.rows, from: i.from, to: i.to, top: i.top })),
    }))
    .filter((e) => e.impact.length > 0);
  await tx.query(setChangesImpact, [snapshotId, JSON.stringify(perEntry)]);
  if (wantsAlert(target.source, 'used_code_changed', target.list.key)) {
    // A digest like the other alerts: the most used first, capped; entry_changes holds every one.
    const shown = [...items].sort((a, b) => b.rows - a.rows || a.code.localeCompare(b.code)).slice(0, ALERT_ENTRY_CAP);
    await writeAlert(
      tx,
      alertFor(target, 'used_code_changed', snapshotId, {
        count: new Set(items.map((i) => i.code)).size,
        impact: shown,
        more: items.length - shown.length,
      }),
    );
  }
  return error;
}
