// The log channel of alerts: every alert is logged once, when first taken, as a short line. The
// `failed` alerts of one drain that share an environment and an error (every list of a run stopped
// by one untrusted certificate, say) are one line naming their lists. The outbox still holds, and a
// webhook still gets, one alert per list: one row per kind per snapshot, as the contract has it,
// which receivers route and deduplicate by.
import { groupAlike } from '../util/alike.ts';
import { causeOf, sharedMessage } from '../util/failure-cause.ts';
import { cutToChars } from '../util/bounded-text.ts';
import type { Logger } from '../util/logger.ts';
import { logFields, logText, type AlertRecord } from './format.ts';

export type AlertChannel = 'webhook' | 'log';

export interface AlertLog {
  logged(alert: AlertRecord, channel: AlertChannel): void;
  /** Logs the failed alerts held back, one line per shared error. */
  flush(): void;
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

export function alertLog(logger: Logger): AlertLog {
  let held: { alert: AlertRecord; channel: AlertChannel }[] = [];
  return {
    logged(alert, channel) {
      if (alert.kind !== 'failed') return logOne(logger, alert, channel);
      held.push({ alert, channel });
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
    },
  };
}
