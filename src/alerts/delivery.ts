import { parseRetryAfter } from '../upstream/retry.ts';
import { cutToBytes } from '../util/bounded-text.ts';
import { endpointLabel, webhookId } from './endpoint.ts';
import { slackBody, standardBody, type AlertRecord } from './format.ts';
import { signWebhook } from './sign.ts';
import { postWebhook, type WebhookResponse } from './transport.ts';
import type { Webhook } from './webhooks.ts';

/** The HTTP status a delivery failed with, and how long the receiver asked us to wait. */
export class DeliveryFailure extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, status?: number, retryAfterMs?: number) {
    super(message);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

const success = (status: number) => status >= 200 && status < 300;

/** One line, no control characters, at most `maxBytes` (as JSON text); the URL's path (maybe a credential) replaced by its label. */
export function clean(text: string, webhook: Webhook | undefined, maxBytes = 300): string {
  let out = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (webhook) {
    out = out.split(webhook.url.href).join(webhook.label);
    if (webhook.url.pathname.length > 1) out = out.split(webhook.url.pathname).join('/…');
    if (webhook.url.search) out = out.split(webhook.url.search).join('?…');
  }
  return cutToBytes(out, maxBytes);
}

/** The most specific message of an error and its causes (undici wraps socket errors). */
export function errorMessage(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    const text = typeof code === 'string' && !current.message.includes(code) ? `${current.message} (${code})` : current.message;
    if (text && !parts.includes(text)) parts.push(text);
    current = (current as { cause?: unknown }).cause;
  }
  if (err instanceof Error && err.name === 'TimeoutError') return 'timed out';
  return parts.join(': ') || String(err);
}

/**
 * Posts one alert to its webhook, signed per Standard Webhooks when the webhook has a secret.
 * Resolves on a 2xx; anything else (a network error, a redirect, which is never followed, another
 * status) throws a DeliveryFailure whose message names the endpoint by its label only.
 */
export async function sendAlert(alert: AlertRecord, webhook: Webhook, timestamp: number, timeoutMs: number): Promise<void> {
  const id = webhookId(alert);
  const body = webhook.format === 'slack' ? slackBody(alert) : standardBody(alert);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'refsync-alerts',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
  };
  if (webhook.key) headers['webhook-signature'] = signWebhook(webhook.key, id, timestamp, body);
  let res: WebhookResponse;
  try {
    res = await postWebhook(webhook.agent, webhook.url, headers, body, AbortSignal.timeout(timeoutMs));
  } catch (err) {
    throw new DeliveryFailure(clean(errorMessage(err), webhook));
  }
  if (success(res.status)) return;
  if (res.status >= 300 && res.status < 400) {
    const location = typeof res.headers.location === 'string' ? res.headers.location : undefined;
    let target = '';
    try {
      if (location) target = ` to ${endpointLabel(new URL(location, webhook.url).href)}`;
    } catch {
      target = ' to an invalid Location';
    }
    throw new DeliveryFailure(`HTTP ${res.status}: redirect${target} not followed; configure the final URL`, res.status);
  }
  const snippet = clean(res.snippet, webhook, 200);
  throw new DeliveryFailure(`HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`, res.status, parseRetryAfter(res.headers['retry-after']));
}
