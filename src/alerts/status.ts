import type { Database } from '../db/database.ts';
import { allDisabledEndpoints } from './outbox-sql.ts';

export interface WebhookEndpointStatus {
  /** The endpoint as refsync names it: origin plus a hash of the full URL (see endpointLabel). */
  url: string;
  /** When it answered 410 Gone; null once re-enabled. */
  disabledAt: Date | null;
  reason: string | null;
}

/** Webhook endpoints the dispatcher has disabled (or that were re-enabled), for `refsync status`. */
export async function webhookStatus(db: Database): Promise<WebhookEndpointStatus[]> {
  const { rows } = await db.query<{ url: string; disabled_at: Date | null; reason: string | null }>(allDisabledEndpoints);
  return rows.map((r) => ({ url: r.url, disabledAt: r.disabled_at ? new Date(r.disabled_at) : null, reason: r.reason }));
}
