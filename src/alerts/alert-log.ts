// The log channel of alerts: every alert is logged once, when first taken, as a short line. The
// `failed` alerts of one drain that share an environment and an error (every list of a run stopped
// by one untrusted certificate, say) are one line naming their lists. The outbox still holds, and a
// webhook still gets, one alert per list: one row per kind per snapshot, as the contract has it,
// which receivers route and deduplicate by. Failed delivery attempts of one drain to one endpoint
// with one error and fate (an endpoint down) are likewise one line, with their count.
import { groupAlike } from '../util/alike.ts';
import { causeOf, sharedMessage } from '../util/failure-cause.ts';
import { cutToChars } from '../util/bounded-text.ts';
import type { Logger } from '../util/logger.ts';
import { logFields, logText, type AlertRecord } from './format.ts';

export type AlertChannel = 'webhook' | 'log';

export interface AlertLog {
  logged(alert: AlertRecord, channel: AlertChannel): void;
  /** A failed delivery attempt, held until flush. */
  deliveryFailed(failed: FailedDelivery): void;
  /** Logs the failed alerts and delivery attempts held back, one line per shared error. */
  flush(): void;
}

/** A failed delivery attempt's log line: its fields (`endpoint` and `err` among them), given up on or when it is tried again. */
export interface FailedDelivery {
  alertId: number;
  fields: Record<string, unknown> & { endpoint: string; err: string };
  dead: boolean;
  nextAttemptAt?: string;
}

const TEXT_LIMIT = 300;

function logOne(logger: Logger, alert: AlertRecord, channel: AlertChannel): void {
  const context = { alertId: alert.id, kind: alert.kind, environment: alert.environment, listKey: alert.listKey, variant: alert.variant };
  logger.info({ alert: { ...context, snapshotId: alert.snapshotId, ...logFields(alert) }, channel }, logText(alert));
}

/** `21 lists failed to sync in production: TLS: certificate ...`, for alerts that share the error. */
function logShared(logger: Logger, alerts: AlertRecord[], channel: AlertChannel): void {
  const p = alerts[0]!.payload;
  const environment = alerts[0]!.environment;
  const what = p.status === 'unavailable' ? 'are unavailable' : 'failed to sync';
  const lists = alerts.map((a) => `${a.listKey}${a.variant ? ` ${a.variant}` : ''}`);
  const alert = { kind: 'failed', environment, alertIds: alerts.map((a) => a.id), lists, error_code: p.error_code };
  const error = p.error === undefined || p.error === null ? String(p.error_code) : sharedMessage(alerts.map((a) => String(a.payload.error)));
  logger.info({ alert, channel }, cutToChars(`${alerts.length} lists ${what} in ${environment}: ${error}`, TEXT_LIMIT));
}

/**
 * One line for failed attempts alike: the attempt's own, or their endpoint and error with their count
 * and alert ids, in id order (the attempts end in whatever order their receivers answer).
 */
function logFailedDeliveries(logger: Logger, group: FailedDelivery[]): void {
  const { fields, dead } = group[0]!;
  const count = group.length;
  const alertIds = group.map((f) => f.alertId).sort((a, b) => a - b);
  const line = count === 1 ? fields : { endpoint: fields.endpoint, err: fields.err, count, alertIds };
  const deliveries = count === 1 ? 'alert delivery' : `${count} alert deliveries`;
  if (dead) logger.error(line, `${deliveries} gave up; requeue with refsync alerts retry ID`);
  else logger.warn({ ...line, nextAttemptAt: group.map((f) => f.nextAttemptAt!).sort()[0] }, `${deliveries} failed; will retry`);
}

export function alertLog(logger: Logger): AlertLog {
  let held: { alert: AlertRecord; channel: AlertChannel }[] = [];
  let failedDeliveries: FailedDelivery[] = [];
  return {
    logged(alert, channel) {
      if (alert.kind !== 'failed') return logOne(logger, alert, channel);
      held.push({ alert, channel });
    },
    deliveryFailed(failed) {
      failedDeliveries.push(failed);
    },
    flush() {
      const key = ({ alert, channel }: (typeof held)[number]) => [
        alert.environment,
        alert.payload.status,
        alert.payload.error_code,
        causeOf(String(alert.payload.error ?? ''), String(alert.payload.error_code)),
        channel,
      ];
      for (const group of groupAlike(held, key)) {
        if (group.length === 1) logOne(logger, group[0]!.alert, group[0]!.channel);
        else
          logShared(
            logger,
            group.map((g) => g.alert),
            group[0]!.channel,
          );
      }
      held = [];
      for (const group of groupAlike(failedDeliveries, (f) => [f.fields.endpoint, f.fields.err, f.dead])) logFailedDeliveries(logger, group);
      failedDeliveries = [];
    },
  };
}
