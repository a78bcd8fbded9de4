import type { AlertKind, SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import { insertAlert } from './outbox-sql.ts';

/** How many entries an alert names before it only counts the rest: a digest, not a dump. */
export const ALERT_ENTRY_CAP = 50;

export interface AlertRow {
  snapshotId: number;
  kind: AlertKind;
  environment: string;
  listKey: string;
  variant: string;
  payload: Record<string, unknown>;
}

/** Whether the source wants alerts of this kind for this list (REFSYNC_ALERT_ON and the list filter). */
export function wantsAlert(source: SourceConfig, kind: AlertKind, listKey: string): boolean {
  if (!source.alertOn.includes(kind)) return false;
  return !source.alertLists || source.alertLists.includes(listKey as never);
}

/**
 * Writes an alert into the outbox, in the caller's transaction: it exists exactly when the data it
 * speaks of was committed. One row per kind per snapshot; a repeated write is a no-op. It also
 * NOTIFYs refdata_alerts so a running dispatcher wakes at once, also for alerts (held, failed)
 * whose transaction sends no refdata_changes; the outbox row stays the record.
 */
export async function writeAlert(tx: Queryable, alert: AlertRow): Promise<void> {
  await tx.query(insertAlert, [alert.snapshotId, alert.kind, alert.environment, alert.listKey, alert.variant, JSON.stringify(alert.payload)]);
}
