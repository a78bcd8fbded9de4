import type { Target } from '../catalog/targets.ts';
import type { ChangeKind } from './load/apply-types.ts';
import { notifyChangesStatement } from './sql.ts';
import type { TargetTransaction } from './target/target-transaction.ts';

export interface ChangeNotice {
  environment: string;
  list_key: string;
  variant: string;
  snapshot_id: number;
  added: number;
  removed: number;
  modified: number;
  reappeared: number;
  /** Entries changed only by fields that appeared in or left the list: not edits, not in `modified`. */
  reshaped: number;
}

/**
 * NOTIFY refdata_changes for a snapshot, in its transaction's COMMIT message: Postgres sends it only
 * once the transaction commits anyway. It is a wake-up signal (listeners re-read the tables); the
 * payload stays far below Postgres's 8000-byte limit.
 */
export function notifyChange(txn: Pick<TargetTransaction, 'atCommit'>, target: Target, snapshotId: number, counts: Record<ChangeKind, number>): void {
  txn.atCommit(notifyChangesStatement([changeNotice(target, snapshotId, counts)]));
}

/** The payload of a snapshot's NOTIFY refdata_changes, as JSON text. */
export function changeNotice(target: Target, snapshotId: number, counts: Record<ChangeKind, number>): string {
  const notice: ChangeNotice = {
    environment: target.source.environment,
    list_key: target.list.key,
    variant: target.variant,
    snapshot_id: snapshotId,
    ...counts,
  };
  return JSON.stringify(notice);
}
