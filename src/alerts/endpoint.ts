import { createHash } from 'node:crypto';

/**
 * How a webhook URL is named in logs, errors and refdata.webhook_endpoints: its origin, plus a
 * short hash of the whole URL when it has a path or query. Incoming-webhook URLs (Slack's among
 * them) carry their credential in the path, so the path itself is never written anywhere.
 */
export function endpointLabel(url: string): string {
  const parsed = new URL(url);
  const bare = (parsed.pathname === '/' || parsed.pathname === '') && !parsed.search;
  if (bare) return parsed.origin;
  const hash = createHash('sha256').update(url).digest('hex').slice(0, 12);
  return `${parsed.origin}/…#${hash}`;
}

/**
 * The webhook-id of an alert: stable across retries, and unique beyond one database — the
 * environment names the source and the creation time tells a restored or reset database's
 * reused ids apart, so receivers that deduplicate on the id never drop a new alert.
 */
export function webhookId(alert: { id: number; environment: string; createdAt: Date }): string {
  const env = /^[A-Za-z0-9_-]{1,64}$/.test(alert.environment)
    ? alert.environment
    : `${alert.environment.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40)}-${createHash('sha256').update(alert.environment).digest('hex').slice(0, 8)}`;
  return `msg_refsync_${env}_${alert.id}_${alert.createdAt.getTime().toString(36)}`;
}
