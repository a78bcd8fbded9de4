import type { AppConfig } from '../config/types.ts';
import { capabilitiesOf } from '../db/capabilities.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../util/logger.ts';
import { clean, DeliveryFailure, errorMessage, sendAlert } from './delivery.ts';
import { dispatcherSettings, type RetryOptions } from './dispatcher-settings.ts';
import { webhookId } from './endpoint.ts';
import { alertFromRow, alertText, type AlertRecord, type AlertRow } from './format.ts';
import { OutboxListener } from './listener.ts';
import { claimDue, disabledEndpoints, disableEndpoint, nextDue, recordAttemptFailed, settleAlert } from './outbox-sql.ts';
import { webhookChannels, type Webhook } from './webhooks.ts';

export type { RetryOptions } from './dispatcher-settings.ts';

export interface DrainResult {
  delivered: number;
  /** Attempts that failed and were scheduled again. */
  failed: number;
  /** Alerts given up on after the last attempt. */
  dead: number;
  /** Alerts of sources without a webhook: logged only. */
  skipped: number;
  /** Alerts not sent because their endpoint answered 410 Gone. */
  disabled: number;
}

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

type Outcome = keyof DrainResult;

/**
 * The outbox dispatcher. Each round claims due pending alerts in one short statement (FOR UPDATE
 * SKIP LOCKED, so several workers share the outbox) and leases them by moving next_attempt_at
 * forward; the HTTP calls happen outside any transaction; each outcome is then recorded. A
 * process that dies mid-delivery leaves the lease to expire and the alert is sent again with the
 * same webhook-id: delivery is at least once, receivers deduplicate on the id.
 */
export function createAlertDispatcher(options: AlertDispatcherOptions): AlertDispatcher {
  const { db, config, logger } = options;
  const now = options.now ?? Date.now;
  const settings = dispatcherSettings(options);
  const { pollIntervalMs, timeoutMs, baseDelayMs, maxDelayMs, maxAgeMs, maxAttempts, batchSize, leaseMs } = settings;
  const webhooks = webhookChannels(config.sources, settings);
  const channels = webhooks.channels;
  const environments = [...channels.keys()];
  const labels = [...new Set([...channels.values()].flatMap((c) => (c.webhook ? [c.webhook.label] : [])))];

  // Schedules (next_attempt_at, leases) are compared with times the database wrote, so they run
  // on the database's clock: a worker whose clock is off still delivers on time. The offset is
  // measured at the first drain and every ten minutes after.
  let clockOffsetMs: number | undefined;
  let clockMeasuredAt = 0;
  async function measureClock(): Promise<void> {
    if (clockOffsetMs !== undefined && performance.now() - clockMeasuredAt < 600_000) return;
    const { rows } = await db.query<{ ms: number }>('select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms');
    clockOffsetMs = Number(rows[0]!.ms) - now();
    clockMeasuredAt = performance.now();
  }
  const dbNow = () => now() + (clockOffsetMs ?? 0);

  function backoff(attempt: number): number {
    const exp = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt - 1, 40));
    return Math.max(1, Math.round(exp * (0.75 + Math.random() * 0.5)));
  }

  async function deliverOne(row: AlertRow, lease: Date, disabled: Map<string, string>): Promise<Outcome> {
    const alert = alertFromRow(row);
    const channel = channels.get(alert.environment);
    const webhook = channel?.webhook;
    const context = { alertId: alert.id, kind: alert.kind, environment: alert.environment, listKey: alert.listKey, variant: alert.variant };
    // Logs are a channel of their own: every alert is logged once, with its digest, when first taken.
    if (alert.attempts === 1) {
      logger.info({ alert: { ...context, snapshotId: alert.snapshotId, digest: alert.payload }, channel: webhook ? 'webhook' : 'log' }, alertText(alert));
    }
    if (!webhook) {
      await settleAlert(db, alert.id, 'skipped', null, new Date(dbNow()));
      return 'skipped';
    }
    const disabledReason = disabled.get(webhook.label);
    if (disabledReason !== undefined) {
      await settleAlert(db, alert.id, 'disabled', `endpoint ${webhook.label} is disabled: ${disabledReason}`, new Date(dbNow()));
      return 'disabled';
    }
    const id = webhookId(alert);
    try {
      await sendAlert(alert, webhook, Math.floor(dbNow() / 1000), timeoutMs);
    } catch (err) {
      const failure = err instanceof DeliveryFailure ? err : new DeliveryFailure(clean(errorMessage(err), webhook));
      if (failure.status === 410) {
        const reason = `${webhook.label} answered 410 Gone at ${new Date(dbNow()).toISOString()}`;
        const served = [...channels.values()].filter((c) => c.webhook?.label === webhook.label).map((c) => c.source.environment);
        await disableEndpoint(db, webhook.label, served, reason, new Date(dbNow()));
        disabled.set(webhook.label, reason);
        logger.warn({ ...context, webhookId: id, endpoint: webhook.label }, `webhook endpoint disabled: ${reason}; re-enable with refsync alerts retry ID`);
        return 'disabled';
      }
      return recordFailure(alert, lease, failure, webhook, context, id);
    }
    const marked = await settleAlert(db, alert.id, 'delivered', null, new Date(dbNow()));
    logger.info({ ...context, webhookId: id, endpoint: webhook.label, attempt: alert.attempts, recorded: marked }, 'alert delivered');
    return 'delivered';
  }

  /** A failed attempt: retried after the backoff (or the receiver's Retry-After), or given up as dead. */
  async function recordFailure(
    alert: AlertRecord,
    lease: Date,
    failure: DeliveryFailure,
    webhook: Webhook,
    context: Record<string, unknown>,
    id: string,
  ): Promise<Outcome> {
    const at = dbNow();
    const delay = Math.min(maxDelayMs * 2, Math.max(backoff(alert.attempts), failure.retryAfterMs ?? 0));
    const next = at + delay;
    const dead = alert.attempts >= maxAttempts || next > alert.retriesFrom.getTime() + maxAgeMs;
    const lastError = dead ? `gave up after ${alert.attempts} attempts: ${failure.message}` : failure.message;
    await recordAttemptFailed(db, alert.id, dead, lastError, dead ? new Date(at) : new Date(next), lease);
    const fields = { ...context, webhookId: id, endpoint: webhook.label, attempt: alert.attempts, err: failure.message };
    if (dead) logger.error(fields, 'alert delivery gave up; requeue with refsync alerts retry ID');
    else logger.warn({ ...fields, nextAttemptAt: new Date(next).toISOString() }, 'alert delivery failed; will retry');
    return dead ? 'dead' : 'failed';
  }

  async function drainOnce(): Promise<DrainResult> {
    const result: DrainResult = { delivered: 0, failed: 0, dead: 0, skipped: 0, disabled: 0 };
    if (environments.length === 0) return result;
    // Only what is due now: an alert that fails is rescheduled past the cutoff, so it is not
    // retried within this call however small the backoff.
    await measureClock();
    // Read, not estimated: an alert requeued a moment ago by another process must count as due,
    // and the estimate can lag the database's clock by a round trip.
    const { rows: clock } = await db.query<{ now: Date }>('select clock_timestamp() as now');
    const cutoff = new Date(clock[0]!.now);
    const disabled = await disabledEndpoints(db, labels);
    for (;;) {
      const lease = new Date(dbNow() + leaseMs);
      const rows = await claimDue(db, cutoff, lease, environments, batchSize);
      if (rows.length === 0) break;
      const outcomes = await Promise.all(
        rows.map((row) =>
          deliverOne(row, lease, disabled).catch((err: unknown) => {
            // A database error while recording: the lease expires and the alert is taken again.
            logger.error({ alertId: Number(row.id), err: errorMessage(err) }, 'alert dispatch failed');
            return 'failed' as const;
          }),
        ),
      );
      outcomes.forEach((outcome, i) => {
        result[outcome]++;
        if (!options.onAlert) return;
        const alert = alertFromRow(rows[i]!);
        try {
          options.onAlert({ alert, outcome, webhookId: webhookId(alert), text: alertText(alert) });
        } catch (err) {
          logger.warn({ alertId: alert.id, err: errorMessage(err) }, 'onAlert callback failed');
        }
      });
      if (rows.length < batchSize) break;
    }
    return result;
  }

  // The continuous loop of start(): drain, then sleep until the next due alert, the poll
  // interval, or a NOTIFY, whichever comes first.
  let running: Promise<void> | undefined;
  let stopping = false;
  let stopped: Promise<void> | undefined;
  let wakeRequested = false;
  let wake: (() => void) | undefined;
  let listener: OutboxListener | undefined;

  const requestWake = () => {
    wakeRequested = true;
    wake?.();
  };

  async function millisUntilNextDue(): Promise<number> {
    const next = await nextDue(db, environments);
    if (!next) return pollIntervalMs;
    return Math.min(pollIntervalMs, Math.max(20, next.getTime() - dbNow()));
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      let wait = pollIntervalMs;
      try {
        wakeRequested = false;
        const r = await drainOnce();
        if (r.delivered + r.failed + r.dead + r.skipped + r.disabled > 0) logger.debug({ ...r }, 'alert outbox drained');
        wait = await millisUntilNextDue();
      } catch (err) {
        logger.error({ err: errorMessage(err) }, 'alert outbox drain failed; will try again');
      }
      if (stopping || wakeRequested) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  return {
    start() {
      if (running || stopping) return;
      if (options.listen !== false && capabilitiesOf(db).listen) {
        // A transaction-mode pooler would take the LISTEN on a server session it then hands to others:
        // behind one, REFSYNC_LISTEN_DATABASE_URL names a direct connection, or 'off' polls only.
        const listenUrl = config.listenDatabaseUrl === 'off' ? undefined : (config.listenDatabaseUrl ?? config.databaseUrl);
        if (listenUrl) {
          listener = new OutboxListener({ databaseUrl: listenUrl, reconnectMs: Math.min(pollIntervalMs, 5_000), logger, onWake: requestWake });
          listener.start();
        } else logger.debug('alert dispatcher: no connection to LISTEN on (DATABASE_URL unset or REFSYNC_LISTEN_DATABASE_URL=off); polling only');
      }
      running = loop();
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        const listenerStopped = listener?.stop();
        wake?.();
        await running?.catch(() => undefined);
        await listenerStopped;
        await webhooks.close();
      })();
      return stopped;
    },
    drainOnce,
  };
}
