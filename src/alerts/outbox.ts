import type { AlertKind, SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';

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

/** Channel of the dispatcher's wake-up: one NOTIFY per alert written, sent by Postgres on commit. */
export const ALERT_CHANNEL = 'refdata_alerts';

/**
 * Writes an alert into the outbox, in the caller's transaction: it exists exactly when the data it
 * speaks of was committed. One row per kind per snapshot; a repeated write is a no-op. It also
 * NOTIFYs refdata_alerts so a running dispatcher wakes at once, also for alerts (held, failed)
 * whose transaction sends no refdata_changes; the outbox row stays the record.
 */
export async function writeAlert(tx: Queryable, alert: AlertRow): Promise<void> {
  await tx.query(
    `with inserted as (
       insert into refdata.alerts (snapshot_id, kind, environment, list_key, variant, payload)
       values ($1, $2, $3, $4, $5, $6::jsonb)
       on conflict (snapshot_id, kind) do nothing
       returning id)
     select pg_notify('${ALERT_CHANNEL}', json_build_object('id', id, 'environment', $3::text, 'kind', $2::text)::text) from inserted`,
    [alert.snapshotId, alert.kind, alert.environment, alert.listKey, alert.variant, JSON.stringify(alert.payload)],
  );
}
