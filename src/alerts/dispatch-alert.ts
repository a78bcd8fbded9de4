import { clean, DeliveryFailure, errorMessage, sendAlert } from './delivery.ts';
import type { DispatchContext, Outcome } from './dispatch-context.ts';
import { webhookId } from './endpoint.ts';
import type { AlertLog } from './alert-log.ts';
import { alertFromRow, type AlertRow } from './format.ts';
import { closeAlert } from './outbox-sql.ts';
import { disableGoneEndpoint, recordDelivered, recordFailedAttempt, type AlertDelivery } from './delivery-result.ts';

/**
 * One claimed alert: logged (to `log`, the drain's), then sent to its webhook unless it has none or
 * its endpoint is disabled, then closed by the outcome. `disabled` holds the endpoints disabled so
 * far (label to reason); a 410 adds to it, so the rest of the round skips that endpoint too.
 */
export async function dispatchAlert(ctx: DispatchContext, row: AlertRow, lease: Date, disabled: Map<string, string>, log: AlertLog): Promise<Outcome> {
  const alert = alertFromRow(row);
  const webhook = ctx.channels.get(alert.environment)?.webhook;
  const context = { alertId: alert.id, kind: alert.kind, environment: alert.environment, listKey: alert.listKey, variant: alert.variant };
  // Logs are a channel of their own: every alert is logged once, when first taken, as a short line
  // (kind, list, counts, a handful of codes); its digest is in the outbox and `refsync alerts`.
  if (alert.attempts === 1) log.logged(alert, webhook ? 'webhook' : 'log');
  if (!webhook) {
    await closeAlert(ctx.db, alert.id, 'skipped', null, ctx.clock.date());
    return 'skipped';
  }
  const disabledReason = disabled.get(webhook.label);
  if (disabledReason !== undefined) {
    await closeAlert(ctx.db, alert.id, 'disabled', `endpoint ${webhook.label} is disabled: ${disabledReason}`, ctx.clock.date());
    return 'disabled';
  }
  const delivery: AlertDelivery = { alert, webhook, webhookId: webhookId(alert), context, lease };
  try {
    await sendAlert(alert, webhook, Math.floor(ctx.clock.now() / 1000), ctx.settings.timeoutMs);
  } catch (err) {
    const failure = err instanceof DeliveryFailure ? err : new DeliveryFailure(clean(errorMessage(err), webhook));
    if (failure.status === 410) return disableGoneEndpoint(ctx, delivery, disabled);
    return recordFailedAttempt(ctx, delivery, failure, log);
  }
  return recordDelivered(ctx, delivery);
}
