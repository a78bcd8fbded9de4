import type { Target } from '../catalog/targets.ts';
import { evolveListColumns } from '../columns/recorded-columns.ts';
import type { Queryable } from '../db/database.ts';
import { zeroCounts, type ApplyOptions, type ApplyResult } from './apply-types.ts';
import type { CollectedList } from './collect.ts';
import { notifyChange } from './notify.ts';
import { insertEntries, insertSnapshot, type SnapshotRow } from './sql.ts';
import type { RowSource } from './staging.ts';

/**
 * The one rule for "is this a first load?": the target has no ok snapshot and no current rows.
 * Both count, since rows left behind by a pruned history still make a resync. The rows are asked
 * for only when there is no ok snapshot, because that costs a query (or an index read).
 */
export async function isFirstLoad(hasOkSnapshot: boolean, hasCurrentRows: () => Promise<boolean>): Promise<boolean> {
  return !hasOkSnapshot && !(await hasCurrentRows());
}

/** The snapshot of a fetched list, from what the collector measured and what the apply found. */
export function snapshotOf(
  collected: CollectedList,
  options: ApplyOptions,
  now: Date,
  row: Pick<SnapshotRow, 'status' | 'changed' | 'counts'> & { id?: number; error?: string },
): SnapshotRow {
  const snapshot: SnapshotRow = {
    runId: options.runId,
    fetchedAt: now,
    status: row.status,
    changed: row.changed,
    counts: row.counts,
    contentHash: collected.contentHash,
    entryCount: collected.entryCount,
    fields: collected.fields,
    pages: collected.pages,
    durationMs: options.durationMs(),
    replacedValues: collected.replacedValues,
    error: row.error ?? null,
    errorCode: row.status === 'held' ? 'held' : null,
  };
  if (row.id !== undefined) snapshot.id = row.id;
  return snapshot;
}

/**
 * The first load of a target: every entry is new, so the rows go straight into the history table,
 * with no diff. It is a baseline: no change rows, no alerts.
 */
export async function firstLoad(
  tx: Queryable,
  target: Target,
  collected: CollectedList,
  rows: RowSource,
  options: ApplyOptions,
  now: Date,
): Promise<ApplyResult> {
  const result = await recordFirstLoad(tx, target, collected, options, now);
  // Identical duplicates came twice; only then is the de-duplicating sort worth paying for.
  const source =
    rows.rows === collected.entryCount ? rows.from : `(select distinct on (entry_key) * from ${rows.from} order by entry_key) d`;
  await insertEntries(tx, target, now, result.snapshotId, { from: source, params: rows.params });
  return result;
}

/**
 * The snapshot and the NOTIFY of a first load, whose rows are (or are about to be) written under
 * the snapshot's id: every entry counts as added.
 */
export async function recordFirstLoad(
  tx: Queryable,
  target: Target,
  collected: CollectedList,
  options: ApplyOptions,
  now: Date,
  snapshotId?: number,
): Promise<ApplyResult> {
  const counts = { ...zeroCounts(), added: collected.entryCount };
  const row: Parameters<typeof snapshotOf>[3] = { status: 'ok', changed: true, counts };
  if (snapshotId !== undefined) row.id = snapshotId;
  const id = await insertSnapshot(tx, target, snapshotOf(collected, options, now, row));
  // A baseline records no changes and no alerts, but the list's views must show its columns.
  await evolveListColumns(tx, target.list.key, collected.columnTypes, id, now);
  await notifyChange(tx, {
    environment: target.source.environment,
    list_key: target.list.key,
    variant: target.variant,
    snapshot_id: id,
    ...counts,
  });
  return { status: 'changed', snapshotId: id, counts, baseline: true };
}
