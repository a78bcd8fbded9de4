// What a load does about a list's views waiting for objects of the user (src/columns/recorded-columns.ts):
// the snapshot names the wait (its status stays ok), and any sync of the list retries it.
import type { Target } from '../../catalog/catalog.ts';
import type { Queryable } from '../../db/database.ts';
import { alertFor } from '../../alerts/alert-row.ts';
import { wantsAlert, writeAlert } from '../../alerts/outbox.ts';
import { lockListColumns, updateListViews, waitingMessage, type ViewsUpdated } from '../../columns/recorded-columns.ts';
import type { TargetTransaction } from '../target/target-transaction.ts';
import { setSnapshotError } from '../sql.ts';

/** Names the wait in the snapshot's error: the data was applied, only the views wait. */
export async function noteWaitingViews(tx: Queryable, snapshotId: number, settled: ViewsUpdated): Promise<void> {
  if (!settled.waiting) return;
  await tx.query(setSnapshotError, [snapshotId, waitingMessage(settled.waiting)]);
}

/** What a schema_changed alert says about the views: the wait and what depends on them, or the change applied after one. */
export function viewsDigest(settled: ViewsUpdated): Record<string, unknown> {
  if (settled.waiting) {
    const { views, dependents, columns, since } = settled.waiting;
    return { views_waiting: { views, dependents, columns, since, message: waitingMessage(settled.waiting) } };
  }
  return settled.applied ? { applied_after_wait: settled.applied } : {};
}

/**
 * An unchanged fetch of a list whose views wait retries them (its fetch changes no column, so it
 * adds nothing to what waits): applied, a schema_changed alert says so; still blocked, the snapshot
 * says why.
 */
export async function retryWaitingViews(txn: TargetTransaction, snapshotId: number): Promise<void> {
  const { q: tx, target, state } = txn;
  await lockListColumns(tx, target.list.key);
  const settled = await updateListViews(tx, target.list.key, [], snapshotId, state.now);
  await noteWaitingViews(tx, snapshotId, settled);
  if (settled.applied) await alertSchema(tx, target, snapshotId, { fields_added: [], fields_removed: [], columns: [], ...viewsDigest(settled) });
}

async function alertSchema(tx: Queryable, target: Target, snapshotId: number, digest: Record<string, unknown>): Promise<void> {
  if (wantsAlert(target.source, 'schema_changed', target.list.key)) await writeAlert(tx, alertFor(target, 'schema_changed', snapshotId, digest));
}
