import type { ApplyOptions } from './apply-types.ts';
import type { CollectedList } from '../collect/collect.ts';
import type { SnapshotRow, UnchangedCandidate } from '../sql.ts';

/** The snapshot of a fetched list, from what the collector measured and what the load found. */
export function snapshotOf(
  collected: CollectedList,
  options: ApplyOptions,
  now: Date,
  row: Pick<SnapshotRow, 'status' | 'changed' | 'counts'> & {
    id?: number;
    error?: string;
    errorCode?: string;
    nonconforming?: number;
    schemaAccepted?: boolean;
  },
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
    nonconforming: row.nonconforming ?? 0,
    error: row.error ?? null,
    errorCode: row.errorCode ?? (row.status === 'held' ? 'held' : null),
    schemaAccepted: row.schemaAccepted ?? false,
  };
  if (row.id !== undefined) snapshot.id = row.id;
  return snapshot;
}

/** What the opening of an apply needs to record a fetch as unchanged, if it is (TargetTransaction.opening). */
export function unchangedCandidate(collected: CollectedList, options: ApplyOptions): UnchangedCandidate {
  return {
    runId: options.runId,
    contentHash: collected.contentHash,
    entryCount: collected.entryCount,
    fields: collected.fields,
    pages: collected.pages,
    durationMs: options.durationMs(),
    replacedValues: collected.replacedValues,
  };
}
