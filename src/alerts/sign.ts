import { createHmac, randomBytes } from 'node:crypto';

const strictBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key of a Standard Webhooks secret: `whsec_` (optional) followed by base64. Returns
 * undefined when the secret is not of that form, so the caller can refuse it as configuration.
 */
export function webhookKey(secret: string): Buffer | undefined {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (encoded === '' || !strictBase64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length > 0 ? key : undefined;
}

/** `v1,<base64 HMAC-SHA256 over "id.timestamp.body">`, the Standard Webhooks signature header. */
export function signWebhook(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * A fresh Standard Webhooks secret: 32 random bytes (the spec asks for 24 to 64) as `whsec_` and
 * base64, the form both refsync and the receiver's library read.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
