import { REMOVALS_HELD, type ErrorCode } from '../../util/error-codes.ts';
import type { ApplyOptions } from './apply-types.ts';
import type { CollectedList } from '../collect/collect.ts';
import type { FetchedFields, SnapshotRow } from '../sql.ts';

/** The snapshot of a fetched list, from what the collector measured and what the load found. */
export function snapshotOf(
  collected: CollectedList,
  options: ApplyOptions,
  now: Date,
  row: Pick<SnapshotRow, 'status' | 'changed' | 'counts'> & {
    id?: number;
    error?: string;
    errorCode?: ErrorCode;
    nonconforming?: number;
    schemaAccepted?: boolean;
  },
): SnapshotRow {
  const snapshot: SnapshotRow = {
    ...fetchedFields(collected, options),
    fetchedAt: now,
    status: row.status,
    changed: row.changed,
    counts: row.counts,
    nonconforming: row.nonconforming ?? 0,
    error: row.error ?? null,
    errorCode: row.errorCode ?? (row.status === 'held' ? REMOVALS_HELD : null),
    schemaAccepted: row.schemaAccepted ?? false,
  };
  if (row.id !== undefined) snapshot.id = row.id;
  return snapshot;
}

/**
 * What the fetch itself measured of its snapshot: part of every snapshot row (snapshotOf), and all an
 * unchanged one needs (refdata.record_unchanged_lists takes it as it is).
 */
export function fetchedFields(collected: CollectedList, options: ApplyOptions): FetchedFields {
  return {
    runId: options.runId,
    contentHash: collected.contentHash,
    entryCount: collected.entryCount,
    fields: collected.fields,
    pages: collected.pages,
    durationMs: options.durationMs(),
    replacedValues: collected.replacedValues,
    servedDigest: collected.servedDigest,
  };
}
