import type { AppConfig } from '../config/types.ts';
import { capabilitiesOf, type Database } from '../db/database.ts';
import type { Logger } from '../util/logger.ts';
import { DatabaseClock } from './database-clock.ts';
import { errorMessage } from './delivery.ts';
import type { DispatchContext, DrainResult, Outcome } from './dispatch-context.ts';
import { DispatchLoop } from './dispatch-loop.ts';
import { dispatcherSettings, type RetryOptions } from './dispatcher-settings.ts';
import { drainDue } from './drain.ts';
import { webhookId } from './endpoint.ts';
import { alertFromRow, alertText, type AlertRecord, type AlertRow } from './format.ts';
import { nextDue } from './outbox-sql.ts';
import { webhookChannels } from './webhooks.ts';

export type { DrainResult };
export type { RetryOptions } from './dispatcher-settings.ts';

export interface AlertDispatcher {
  /** Drains continuously: on NOTIFY refdata_alerts / refdata_changes (Postgres) and every poll interval. */
  start(): void;
  /** Stops the loop, waits for deliveries in flight, closes connections. Idempotent. */
  stop(): Promise<void>;
  /** Delivers every alert due now once (failures are rescheduled, not retried in this call). */
  drainOnce(): Promise<DrainResult>;
}

export interface AlertDispatcherOptions {
  db: Database;
  config: AppConfig;
  logger: Logger;
  /** LISTEN refdata_alerts and refdata_changes for a prompt wake-up (Postgres only; on config.listenDatabaseUrl, else config.databaseUrl). Default true. */
  listen?: boolean;
  /** Safety-net poll when no notification comes. Default 15 s. */
  pollIntervalMs?: number;
  /** Clock, ms since the epoch (tests). Default Date.now. */
  now?: () => number;
  retry?: RetryOptions;
  /** Whole-request limit of one delivery (connect, headers, body). Default 30 s. */
  timeoutMs?: number;
  /** Extra CA PEM(s) trusted for webhook endpoints, beside Node's default roots (tests, private CAs). */
  ca?: string | string[];
  /** Alerts claimed per round. Default 20. */
  batchSize?: number;
  /** Called after each alert handled (the demo prints them, the worker counts them). */
  onAlert?: (event: AlertEvent) => void;
}

export interface AlertEvent {
  alert: AlertRecord;
  outcome: keyof DrainResult;
  webhookId: string;
  /** One readable line (alertText). */
  text: string;
}

/**
 * The outbox dispatcher. Each round claims due pending alerts in one short statement (FOR UPDATE
 * SKIP LOCKED, so several workers share the outbox) and leases them by moving next_attempt_at
 * forward; the HTTP calls happen outside any transaction; each outcome is then recorded. A
 * process that dies mid-delivery leaves the lease to expire and the alert is sent again with the
 * same webhook-id: delivery is at least once, receivers deduplicate on the id.
 */
export function createAlertDispatcher(options: AlertDispatcherOptions): AlertDispatcher {
  const { db, config, logger } = options;
  const settings = dispatcherSettings(options);
  const webhooks = webhookChannels(config.sources, settings);
  const ctx: DispatchContext = { db, logger, settings, clock: new DatabaseClock(db, options.now ?? Date.now), channels: webhooks.channels };
  const environments = [...ctx.channels.keys()];
  const labels = [...new Set([...ctx.channels.values()].flatMap((c) => (c.webhook ? [c.webhook.label] : [])))];

  const drainOnce = () => drainDue(ctx, { environments, labels }, report);

  /** Hands each outcome to onAlert, whose failure is only logged. */
  function report(row: AlertRow, outcome: Outcome): void {
    if (!options.onAlert) return;
    const alert = alertFromRow(row);
    try {
      options.onAlert({ alert, outcome, webhookId: webhookId(alert), text: alertText(alert) });
    } catch (err) {
      logger.warn({ alertId: alert.id, err: errorMessage(err) }, 'onAlert callback failed');
    }
  }

  const loop = new DispatchLoop({
    drain: drainOnce,
    millisUntilNextDue: async () => {
      const next = await nextDue(db, environments);
      if (!next) return settings.pollIntervalMs;
      return Math.min(settings.pollIntervalMs, Math.max(20, next.getTime() - ctx.clock.now()));
    },
    pollIntervalMs: settings.pollIntervalMs,
    logger,
  });
  let stopped: Promise<void> | undefined;
  return {
    start: () => loop.start(() => (options.listen === false ? undefined : listenUrl(db, config, logger))),
    stop() {
      stopped ??= loop.stop().then(() => webhooks.close());
      return stopped;
    },
    drainOnce,
  };
}

/**
 * Where to LISTEN for a prompt wake-up, or undefined to poll only. A transaction-mode pooler would
 * take the LISTEN on a server session it then hands to others: behind one,
 * REFSYNC_LISTEN_DATABASE_URL names a direct connection, or 'off' polls only.
 */
function listenUrl(db: Database, config: AppConfig, logger: Logger): string | undefined {
  if (!capabilitiesOf(db).listen) return undefined;
  const url = config.listenDatabaseUrl === 'off' ? undefined : (config.listenDatabaseUrl ?? config.databaseUrl);
  if (!url) logger.debug('alert dispatcher: no connection to LISTEN on (DATABASE_URL unset or REFSYNC_LISTEN_DATABASE_URL=off); polling only');
  return url;
}
