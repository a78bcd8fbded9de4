import pg from 'pg';
import type { Agent } from 'undici';
import { ConfigError } from '../config/errors.ts';
import type { AppConfig, SourceConfig, WebhookFormat } from '../config/types.ts';
import { capabilitiesOf } from '../db/capabilities.ts';
import type { Database } from '../db/database.ts';
import { parseRetryAfter } from '../upstream/retry.ts';
import type { Logger } from '../util/logger.ts';
import { endpointLabel, webhookId } from './endpoint.ts';
import { alertFromRow, alertText, slackBody, standardBody, type AlertRecord, type AlertRow } from './format.ts';
import { ALERT_CHANNEL } from './outbox.ts';
import { webhookKey, signWebhook } from './sign.ts';
import { createWebhookAgent, postWebhook } from './transport.ts';

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

export interface RetryOptions {
  /** First retry delay; doubles per attempt, ±25% jitter. Default 30 s. */
  baseDelayMs?: number;
  /** Longest delay between two attempts. Default 1 h. */
  maxDelayMs?: number;
  /** Given up (dead) when the next attempt would come later than this after the alert was created. Default 24 h. */
  maxAgeMs?: number;
  /** Given up after this many attempts. Default 30 (about 24 h with the defaults above). */
  maxAttempts?: number;
}

export interface AlertDispatcherOptions {
  db: Database;
  config: AppConfig;
  logger: Logger;
  /** LISTEN refdata_alerts and refdata_changes for a prompt wake-up (Postgres only; needs config.databaseUrl). Default true. */
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

interface Webhook {
  url: URL;
  /** The URL as logs, errors and tables may name it (no path: it may hold a credential). */
  label: string;
  format: WebhookFormat;
  key?: Buffer;
  agent: Agent;
}

interface Channel {
  source: SourceConfig;
  webhook?: Webhook;
}

type ClaimedRow = AlertRow;

type Outcome = keyof DrainResult;

const success = (status: number) => status >= 200 && status < 300;

/** The HTTP status a delivery failed with, and how long the receiver asked us to wait. */
class DeliveryFailure extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, status?: number, retryAfterMs?: number) {
    super(message);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

/** One line, no control characters, bounded; the URL's path (maybe a credential) replaced by its label. */
function clean(text: string, webhook: Webhook | undefined, max = 300): string {
  let out = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (webhook) {
    out = out.split(webhook.url.href).join(webhook.label);
    if (webhook.url.pathname.length > 1) out = out.split(webhook.url.pathname).join('/…');
    if (webhook.url.search) out = out.split(webhook.url.search).join('?…');
  }
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

/** The most specific message of an error and its causes (undici wraps socket errors). */
function errorMessage(err: unknown): string {
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


function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`alert dispatcher: ${name} must be a positive number`);
  return value;
}

function buildWebhook(source: SourceConfig, agents: (allowPrivate: boolean) => Agent): Webhook | undefined {
  const config = source.webhook;
  if (!config) return undefined;
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw new ConfigError(`REFSYNC_WEBHOOK_URL (source ${source.name}): is not a URL`);
  }
  const label = endpointLabel(url.href);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && config.allowPrivate)) {
    throw new ConfigError(`REFSYNC_WEBHOOK_URL (source ${source.name}): ${label} must be https:// (http:// only with REFSYNC_WEBHOOK_ALLOW_PRIVATE)`);
  }
  if (url.username || url.password) {
    throw new ConfigError(`REFSYNC_WEBHOOK_URL (source ${source.name}): must not carry user info`);
  }
  const webhook: Webhook = { url, label, format: config.format, agent: agents(config.allowPrivate) };
  if (config.secret !== undefined) {
    const key = webhookKey(config.secret);
    if (!key) {
      throw new ConfigError(
        `REFSYNC_WEBHOOK_SECRET (source ${source.name}): must be a Standard Webhooks secret, 'whsec_' followed by base64`,
      );
    }
    webhook.key = key;
  }
  return webhook;
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
  const now = options.now ?? Date.now;
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs, 15_000);
  const timeoutMs = positive('timeoutMs', options.timeoutMs, 30_000);
  const baseDelayMs = positive('retry.baseDelayMs', options.retry?.baseDelayMs, 30_000);
  const maxDelayMs = positive('retry.maxDelayMs', options.retry?.maxDelayMs, 60 * 60_000);
  const maxAgeMs = positive('retry.maxAgeMs', options.retry?.maxAgeMs, 24 * 60 * 60_000);
  const maxAttempts = positive('retry.maxAttempts', options.retry?.maxAttempts, 30);
  const batchSize = positive('batchSize', options.batchSize, 20);
  // Long enough that a delivery in flight always finishes (or times out) before another worker may take it.
  const leaseMs = timeoutMs * 2 + 30_000;
  const ca = options.ca === undefined ? [] : Array.isArray(options.ca) ? options.ca : [options.ca];

  const agentByMode = new Map<boolean, Agent>();
  const agentFor = (allowPrivate: boolean): Agent => {
    let agent = agentByMode.get(allowPrivate);
    if (!agent) {
      const connectMs = Math.min(10_000, timeoutMs);
      agent = createWebhookAgent({ allowPrivate, ca, timeouts: { connectMs, headersMs: timeoutMs, bodyMs: timeoutMs } });
      agentByMode.set(allowPrivate, agent);
    }
    return agent;
  };
  const channels = new Map<string, Channel>();
  for (const source of config.sources) {
    const channel: Channel = { source };
    const webhook = buildWebhook(source, agentFor);
    if (webhook) channel.webhook = webhook;
    channels.set(source.environment, channel);
  }
  const environments = [...channels.keys()];

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

  async function claim(cutoff: Date): Promise<{ rows: ClaimedRow[]; lease: Date }> {
    const lease = new Date(dbNow() + leaseMs);
    const { rows } = await db.query<ClaimedRow>(
      `update refdata.alerts a
          set attempts = a.attempts + 1, next_attempt_at = $1
         from (select id from refdata.alerts
                where state = 'pending' and next_attempt_at <= $2 and environment = any($3::text[])
                order by next_attempt_at, id
                limit $4
                for update skip locked) due
        where a.id = due.id
        returning a.id, a.snapshot_id, a.kind, a.payload, a.created_at, a.requeued_at, a.attempts, a.environment, a.list_key, a.variant`,
      [lease, cutoff, environments, batchSize],
    );
    return { rows: rows.sort((x, y) => Number(x.id) - Number(y.id)), lease };
  }

  async function disabledEndpoints(): Promise<Map<string, string>> {
    const labels = [...new Set([...channels.values()].flatMap((c) => (c.webhook ? [c.webhook.label] : [])))];
    if (labels.length === 0) return new Map();
    const { rows } = await db.query<{ url: string; reason: string | null; disabled_at: Date }>(
      'select url, reason, disabled_at from refdata.webhook_endpoints where url = any($1::text[]) and disabled_at is not null',
      [labels],
    );
    return new Map(rows.map((r) => [r.url, r.reason ?? `disabled at ${new Date(r.disabled_at).toISOString()}`]));
  }

  async function finish(id: number, state: 'delivered' | 'skipped' | 'disabled', lastError: string | null): Promise<boolean> {
    const { affectedRows } = await db.query(
      `update refdata.alerts set state = $2, last_error = $3,
              delivered_at = case when $2 = 'delivered' then $4::timestamptz else delivered_at end
        where id = $1 and state = 'pending'`,
      [id, state, lastError, new Date(dbNow())],
    );
    return (affectedRows ?? 0) > 0;
  }

  async function disableEndpoint(webhook: Webhook, reason: string): Promise<void> {
    const at = new Date(dbNow());
    const envs = [...channels.values()].filter((c) => c.webhook?.label === webhook.label).map((c) => c.source.environment);
    await db.transaction(async (tx) => {
      await tx.query(
        `insert into refdata.webhook_endpoints (url, disabled_at, reason, updated_at) values ($1, $2, $3, $2)
         on conflict (url) do update set disabled_at = excluded.disabled_at, reason = excluded.reason, updated_at = excluded.updated_at`,
        [webhook.label, at, reason],
      );
      await tx.query(
        `update refdata.alerts set state = 'disabled', last_error = $2
          where state = 'pending' and environment = any($1::text[])`,
        [envs, reason],
      );
    });
  }

  async function send(alert: AlertRecord, webhook: Webhook): Promise<void> {
    const id = webhookId(alert);
    const body = webhook.format === 'slack' ? slackBody(alert) : standardBody(alert);
    const timestamp = Math.floor(dbNow() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'refsync-alerts',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
    };
    if (webhook.key) headers['webhook-signature'] = signWebhook(webhook.key, id, timestamp, body);
    let res;
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

  async function deliverOne(row: ClaimedRow, lease: Date, disabled: Map<string, string>): Promise<Outcome> {
    const alert = alertFromRow(row);
    const channel = channels.get(alert.environment);
    const webhook = channel?.webhook;
    const context = { alertId: alert.id, kind: alert.kind, environment: alert.environment, listKey: alert.listKey, variant: alert.variant };
    // Logs are a channel of their own: every alert is logged once, with its digest, when first taken.
    if (alert.attempts === 1) {
      logger.info({ alert: { ...context, snapshotId: alert.snapshotId, digest: alert.payload }, channel: webhook ? 'webhook' : 'log' }, alertText(alert));
    }
    if (!webhook) {
      await finish(alert.id, 'skipped', null);
      return 'skipped';
    }
    const disabledReason = disabled.get(webhook.label);
    if (disabledReason !== undefined) {
      await finish(alert.id, 'disabled', `endpoint ${webhook.label} is disabled: ${disabledReason}`);
      return 'disabled';
    }
    const id = webhookId(alert);
    try {
      await send(alert, webhook);
    } catch (err) {
      const failure = err instanceof DeliveryFailure ? err : new DeliveryFailure(clean(errorMessage(err), webhook));
      if (failure.status === 410) {
        const reason = `${webhook.label} answered 410 Gone at ${new Date(dbNow()).toISOString()}`;
        await disableEndpoint(webhook, reason);
        disabled.set(webhook.label, reason);
        logger.warn({ ...context, webhookId: id, endpoint: webhook.label }, `webhook endpoint disabled: ${reason}; re-enable with refsync alerts retry ID`);
        return 'disabled';
      }
      return recordFailure(alert, lease, failure, webhook, context, id);
    }
    const marked = await finish(alert.id, 'delivered', null);
    logger.info({ ...context, webhookId: id, endpoint: webhook.label, attempt: alert.attempts, recorded: marked }, 'alert delivered');
    return 'delivered';
  }

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
    // Only while our lease holds: if another worker took the alert meanwhile, its outcome wins.
    await db.query(
      `update refdata.alerts set state = $2, last_error = $3, next_attempt_at = $4
        where id = $1 and state = 'pending' and next_attempt_at = $5`,
      [alert.id, dead ? 'dead' : 'pending', lastError, dead ? new Date(at) : new Date(next), lease],
    );
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
    const cutoff = new Date(dbNow());
    const disabled = await disabledEndpoints();
    for (;;) {
      const { rows, lease } = await claim(cutoff);
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
  let listener: pg.Client | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const requestWake = () => {
    wakeRequested = true;
    wake?.();
  };

  async function millisUntilNextDue(): Promise<number> {
    const { rows } = await db.query<{ next: Date | null }>(
      `select min(next_attempt_at) as next from refdata.alerts where state = 'pending' and environment = any($1::text[])`,
      [environments],
    );
    const next = rows[0]?.next;
    if (!next) return pollIntervalMs;
    return Math.min(pollIntervalMs, Math.max(20, new Date(next).getTime() - dbNow()));
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

  async function listen(): Promise<void> {
    if (stopping || !config.databaseUrl) return;
    const client = new pg.Client({ connectionString: config.databaseUrl, application_name: 'refsync-alerts-listen' });
    const retry = () => {
      if (listener !== client) return;
      listener = undefined;
      client.end().catch(() => undefined);
      if (!stopping && !reconnectTimer) {
        reconnectTimer = setTimeout(() => {
          reconnectTimer = undefined;
          void listen();
        }, Math.min(pollIntervalMs, 5_000));
      }
    };
    client.on('error', (err) => {
      logger.warn({ err: err.message }, 'alert LISTEN connection lost; polling until it is back');
      retry();
    });
    client.on('end', () => {
      if (!stopping) retry();
    });
    client.on('notification', () => requestWake());
    listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN refdata_changes; LISTEN ${ALERT_CHANNEL}`);
      if (stopping) await client.end().catch(() => undefined);
      // Anything committed while we were not listening is found by the drain this triggers.
      else requestWake();
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'alert LISTEN failed; polling until it works');
      retry();
    }
  }

  return {
    start() {
      if (running || stopping) return;
      if (options.listen !== false && capabilitiesOf(db).listen) {
        if (config.databaseUrl) void listen();
        else logger.debug('alert dispatcher: no DATABASE_URL to LISTEN on; polling only');
      }
      running = loop();
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        clearTimeout(reconnectTimer);
        wake?.();
        await running?.catch(() => undefined);
        const client = listener;
        listener = undefined;
        await client?.end().catch(() => undefined);
        await Promise.all([...agentByMode.values()].map((a) => a.close().catch(() => a.destroy())));
      })();
      return stopped;
    },
    drainOnce,
  };
}
