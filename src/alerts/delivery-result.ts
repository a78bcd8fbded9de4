// The last step of a dispatch: what became of an alert is written to the outbox and logged.
import type { AlertLog } from './alert-log.ts';
import type { DeliveryFailure } from './delivery.ts';
import type { DispatchContext, Outcome } from './dispatch-context.ts';
import type { AlertRecord } from './format.ts';
import { disableEndpoint, recordAttemptFailed, closeAlert } from './outbox-sql.ts';
import { nextAttempt } from './retry-schedule.ts';
import type { Webhook } from './webhooks.ts';

/** The alert as every log line of its delivery names it. */
export interface AlertDelivery {
  alert: AlertRecord;
  webhook: Webhook;
  webhookId: string;
  /** The log fields that identify the alert. */
  context: Record<string, unknown>;
  /** The claim on the alert: an outcome is recorded only while it still holds. */
  lease: Date;
}

export async function recordDelivered(ctx: DispatchContext, d: AlertDelivery): Promise<Outcome> {
  const marked = await closeAlert(ctx.db, d.alert.id, 'delivered', null, ctx.clock.date());
  ctx.logger.info({ ...d.context, webhookId: d.webhookId, endpoint: d.webhook.label, attempt: d.alert.attempts, recorded: marked }, 'alert delivered');
  return 'delivered';
}

/**
 * A 410 Gone: the endpoint is disabled for every environment it serves, so their alerts wait
 * (closed as disabled) until an operator re-enables it, instead of being retried for a day.
 */
export async function disableGoneEndpoint(ctx: DispatchContext, d: AlertDelivery, disabled: Map<string, string>): Promise<Outcome> {
  const { label } = d.webhook;
  const reason = `${label} answered 410 Gone at ${ctx.clock.date().toISOString()}`;
  const served = [...ctx.channels.values()].filter((c) => c.webhook?.label === label).map((c) => c.source.environment);
  await disableEndpoint(ctx.db, label, served, reason, ctx.clock.date());
  disabled.set(label, reason);
  ctx.logger.warn({ ...d.context, webhookId: d.webhookId, endpoint: label }, `webhook endpoint disabled: ${reason}; re-enable with refsync alerts retry ID`);
  return 'disabled';
}

/** A failed attempt: retried after the backoff (or the receiver's Retry-After), or given up as dead; logged to the drain's `log`. */
export async function recordFailedAttempt(ctx: DispatchContext, d: AlertDelivery, failure: DeliveryFailure, log: AlertLog): Promise<Outcome> {
  const { alert } = d;
  const at = ctx.clock.now();
  const { dead, nextAt } = nextAttempt(ctx.settings, alert, failure.retryAfterMs, at);
  const lastError = dead ? `gave up after ${alert.attempts} attempts: ${failure.message}` : failure.message;
  await recordAttemptFailed(ctx.db, alert.id, dead, lastError, dead ? new Date(at) : new Date(nextAt), d.lease);
  const fields = { ...d.context, webhookId: d.webhookId, endpoint: d.webhook.label, attempt: alert.attempts, err: failure.message };
  log.deliveryFailed({ alertId: alert.id, fields, dead, ...(dead ? {} : { nextAttemptAt: new Date(nextAt).toISOString() }) });
  return dead ? 'dead' : 'failed';
}
