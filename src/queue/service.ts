// `refsync worker` as a library: everything a worker process runs, started in dependency order and
// closed in reverse, keeping the first error. The CLI adds signals and exit codes; tests start it
// in process.
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { ConfigError } from '../config/errors.ts';
import type { AppConfig, SourceConfig } from '../config/types.ts';
import { openDatabase, type Database } from '../db/database.ts';
import { createHttpApp, startHttpServer, type HttpServer, type ReadyReport } from '../server/http.ts';
import { WorkerMetrics } from '../server/metrics.ts';
import { loadStatusPage, renderStatusPage } from '../server/status-page.ts';
import type { UpstreamClient, UpstreamClientOptions } from '../upstream/client.ts';
import { createUpstreamClient } from '../upstream/factory.ts';
import type { Logger } from '../util/logger.ts';
import { createAlertDispatcher, type AlertDispatcher } from '../alerts/dispatcher.ts';
import { assertNoEviction, assertNotCluster, closeClient, describeRedis, openCommandClient, workerConnectionOptions } from './connection.ts';
import { defaultJobPolicy, reconcileSchedulers, type JobPolicy, type SyncJobData } from './jobs.ts';
import { QUEUE_NAME, queuePrefix, schedulerId } from './names.ts';
import { closeLostTargets, failedOutsideProcessor, recordLostTarget } from './lost-targets.ts';
import { SourceGate } from './source-gate.ts';
import { describeConnectError } from '../db/tls.ts';
import { startPeriodicPrune } from '../retention/periodic.ts';
import { createProcessor, type JobResult } from './processor.ts';

/** The longest Retry-After a job waits for in its slot; longer ones put the job back instead. */
const WORKER_MAX_RETRY_AFTER_MS = 5_000;

export interface WorkerServiceOptions {
  logger: Logger;
  /** Redis key prefix; default REFSYNC_QUEUE_PREFIX or `refsync`. */
  prefix?: string;
  policy?: Partial<JobPolicy>;
  /** How long running jobs may finish after a stop before they are aborted (default 30 s). */
  shutdownTimeoutMs?: number;
  /** How often the worker's Redis connections are checked (default 5 s). */
  healthIntervalMs?: number;
  /**
   * How long the worker's blocking connection may stay down while Redis answers other commands
   * before the worker is recreated (default 30 s): BullMQ has had cases where it never recovers.
   */
  recreateAfterMs?: number;
  /** Extra upstream client options (tests shorten retries). */
  clientOptions?: Partial<UpstreamClientOptions>;
  /** How often target jobs that BullMQ failed outside the processor are looked for (default 60 s). */
  lostTargetIntervalMs?: number;
  /** Age of an open run before its failed target jobs are swept (default 5 min; see lost-targets.ts). */
  lostTargetAfterMs?: number;
  /** Run the alert outbox dispatcher in this process (default true; every worker may, they share by SKIP LOCKED). */
  alerts?: boolean;
  /** How often old rows are pruned per the retention settings (default 1 hour; see src/retention). */
  retentionIntervalMs?: number;
}

export interface WorkerService {
  readonly queue: Queue;
  readonly http: HttpServer;
  readonly metrics: WorkerMetrics;
  readonly db: Database;
  /** The BullMQ worker taking jobs now (the health check may replace it). */
  readonly worker: Worker;
  /** Incremented each time the BullMQ worker is recreated by the health check. */
  readonly workerGeneration: number;
  readiness(): Promise<ReadyReport>;
  /** Stops taking jobs, lets running ones finish (bounded), then closes everything. Idempotent. */
  close(): Promise<void>;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return settled;
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}

export async function startWorkerService(config: AppConfig, options: WorkerServiceOptions): Promise<WorkerService> {
  const logger = options.logger.child({ component: 'worker' });
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL: is required for refsync worker (embedded PGlite is for sync and demo only)');
  const prefix = options.prefix ?? queuePrefix();
  const policy: JobPolicy = { ...defaultJobPolicy, ...options.policy };
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 30_000;
  const healthIntervalMs = options.healthIntervalMs ?? 5_000;
  const recreateAfterMs = options.recreateAfterMs ?? 30_000;

  // Resources in the order they are opened; close() walks this list backwards.
  const closers: Array<{ name: string; close: () => Promise<unknown> }> = [];
  const closeAll = async (): Promise<void> => {
    let first: unknown;
    for (const { name, close } of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        logger.warn({ resource: name, err: oneLine(err) }, 'close failed');
        first ??= err;
      }
    }
    if (first) throw first;
  };

  try {
    const db = await openDatabase({ url: config.databaseUrl, poolSize: config.concurrency + 4, logger, applicationName: 'refsync-worker' });
    closers.push({ name: 'postgres', close: () => db.close() });
    try {
      await within(db.query('select 1 from refdata.sync_runs limit 0'), 10_000, 'Postgres');
    } catch (err) {
      const message = oneLine(err);
      if (/refdata|does not exist/.test(message)) throw new ConfigError('DATABASE_URL: the refdata schema is missing; run `refsync migrate` first');
      throw new Error(`Postgres is not reachable: ${describeConnectError(err)}`);
    }

    let queue: Queue<SyncJobData> | undefined;
    let worker: Worker<SyncJobData, JobResult> | undefined;
    let redis: Redis | undefined;
    let stopping = false;

    const metrics = new WorkerMetrics({
      db,
      sources: config.sources,
      logger,
      sourceLabel: config.metricsSourceLabel,
      queueCounts: async () =>
        queue ? queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed') : {},
    });

    const blockingStatus = async (w: Worker): Promise<string> => {
      const client = w.backend.blockingClient;
      return client ? ((await within(client, 1_000, 'blocking client')).status ?? 'unknown') : 'none';
    };

    const readiness = async (): Promise<ReadyReport> => {
      const checks: Record<string, string> = {};
      const check = async (name: string, fn: () => Promise<string>) => {
        try {
          checks[name] = await fn();
        } catch (err) {
          checks[name] = oneLine(err);
        }
      };
      await Promise.all([
        check('postgres', async () => {
          await within(db.query('select 1'), 2_000, 'select 1');
          return 'ok';
        }),
        check('redis', async () => {
          if (!redis) return 'starting';
          await within(redis.ping(), 2_000, `ping ${describeRedis(config.redisUrl)}`);
          return 'ok';
        }),
        check('worker', async () => {
          if (stopping) return 'stopping';
          if (!worker) return 'starting';
          if (!worker.isRunning()) return 'not running';
          const status = await blockingStatus(worker);
          return status === 'ready' ? 'ok' : `blocking connection ${status}`;
        }),
      ]);
      return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
    };

    const web = createHttpApp({
      readiness,
      metrics,
      statusPage: async () => renderStatusPage(await loadStatusPage(db, config.sources)),
      ...(config.dashboardPassword ? { dashboardPassword: config.dashboardPassword } : {}),
    });
    const http = await startHttpServer(web.app, config.httpHost, config.httpPort).catch((err: NodeJS.ErrnoException) => {
      throw new ConfigError(`REFSYNC_HTTP_PORT: cannot listen on ${config.httpHost}:${config.httpPort} (${err.code ?? err.message})`);
    });
    closers.push({ name: 'http', close: () => http.close() });

    const commands = await openCommandClient(config.redisUrl, { reconnect: true, connectionName: 'refsync-worker-commands', reach: config });
    redis = commands;
    closers.push({ name: 'redis', close: () => closeClient(commands) });
    await assertNotCluster(commands, config.redisUrl);
    await assertNoEviction(commands, config.redisUrl);

    // The queue shares the fail-fast command client: while Redis is away its commands fail at
    // once (a fan-out job is then retried) instead of piling up in memory.
    const jobs = new Queue<SyncJobData>(QUEUE_NAME, { connection: commands, prefix });
    queue = jobs;
    jobs.on('error', (err) => logger.warn({ err: oneLine(err) }, 'queue connection error'));
    closers.push({ name: 'queue', close: () => jobs.close() });
    web.setQueues([jobs]);

    const change = await reconcileSchedulers(jobs, config.sources, policy);
    logger.info({ schedulers: change.upserted, removed: change.removed, prefix }, 'schedules installed');

    const clients = new Map<string, UpstreamClient>();
    closers.push({
      name: 'upstream clients',
      close: () => Promise.all([...clients.values()].map((c) => c.close())),
    });
    const clientFor = (source: SourceConfig): UpstreamClient => {
      let client = clients.get(source.name);
      if (!client) {
        client = createUpstreamClient(source, options.logger, {
          ...options.clientOptions,
          // A long Retry-After is not slept on in a job slot: the job goes back to the queue and
          // its source cools down (see SourceGate), so the slot serves other sources meanwhile.
          retry: { maxRetryAfterMs: WORKER_MAX_RETRY_AFTER_MS, ...options.clientOptions?.retry },
          onRequest: (info) => metrics.upstreamRequest(source.name, info),
        });
        clients.set(source.name, client);
      }
      return client;
    };

    const lostTargetDeps = { db, sources: config.sources, logger };
    let generation = 0;
    const processor = createProcessor({
      db,
      queue: jobs,
      sources: config.sources,
      clientFor,
      policy,
      logger,
      metrics,
      gate: new SourceGate(commands, prefix),
    });
    const makeWorker = (): Worker<SyncJobData, JobResult> => {
      const w = new Worker<SyncJobData, JobResult>(QUEUE_NAME, processor, {
        connection: workerConnectionOptions(config.redisUrl, config),
        prefix,
        concurrency: config.concurrency,
        name: `refsync-${process.pid}`,
        // Jobs finished by this worker are trimmed as they finish (see jobOptions for the figures).
        removeOnComplete: { count: 1_000, age: 24 * 3600 },
        removeOnFail: { count: 5_000, age: 14 * 24 * 3600 },
      });
      w.on('error', (err) => logger.warn({ err: oneLine(err) }, 'worker connection error'));
      w.on('completed', (job: Job<SyncJobData>) => metrics.job(job.name, 'completed'));
      w.on('failed', (job: Job<SyncJobData> | undefined, err: Error) => {
        if (!job) return;
        const final = err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
        metrics.job(job.name, final ? 'failed' : 'retried');
        logger[final ? 'warn' : 'info']({ jobId: job.id, attempt: job.attemptsMade, err: oneLine(err) }, final ? 'job failed' : 'job will retry');
        if (failedOutsideProcessor(job)) {
          recordLostTarget(lostTargetDeps, job).catch((e) =>
            logger.warn({ jobId: job.id, err: oneLine(e) }, 'recording a target job failed outside the sync failed; the sweep will retry'),
          );
        }
      });
      generation++;
      return w;
    };
    let current = makeWorker();
    worker = current;
    const retired: Promise<void>[] = [];
    closers.push({
      name: 'worker',
      close: async () => {
        const w = current;
        const graceful = w.close();
        if (!(await settlesWithin(graceful, shutdownTimeoutMs))) {
          logger.warn({ timeoutMs: shutdownTimeoutMs }, 'jobs still running at the shutdown deadline: aborting them (they will be retried)');
          w.cancelAllJobs('worker shutting down');
          if (!(await settlesWithin(graceful, 10_000))) throw new Error('worker: running jobs did not stop after being aborted');
        }
        await graceful;
        await Promise.allSettled(retired);
      },
    });

    // Watchdog: when Redis answers but the worker's blocking connection has stayed down (or the
    // worker stopped running) for recreateAfterMs, replace the worker. BullMQ's own reconnect
    // usually suffices; this covers the cases where it has been known not to.
    let unhealthySince: number | undefined;
    let checking = false;
    const restoreSchedulers = async () => {
      const present = await Promise.all(config.sources.map((source) => jobs.getJobScheduler(schedulerId(source))));
      if (present.every(Boolean)) return;
      const change = await reconcileSchedulers(jobs, config.sources, policy);
      logger.warn({ schedulers: change.upserted }, 'schedulers were missing from Redis: reinstalled');
    };
    const watchdog = setInterval(() => {
      if (checking || stopping) return;
      checking = true;
      (async () => {
        const redisUp = await within(commands.ping(), 2_000, 'ping').then(() => true, () => false);
        // A Redis flushed, restarted without persistence or failed over to an empty replica has
        // lost the schedulers: put them back, or scheduled syncs would stop silently.
        if (redisUp && !stopping) await restoreSchedulers();
        const status = await blockingStatus(current).catch(() => 'unknown');
        const healthy = !redisUp || (status === 'ready' && current.isRunning());
        if (healthy) {
          unhealthySince = undefined;
          return;
        }
        unhealthySince ??= Date.now();
        if (Date.now() - unhealthySince < recreateAfterMs || stopping) return;
        logger.warn({ blocking: status, running: current.isRunning() }, 'worker is not taking jobs although Redis answers: recreating it');
        const old = current;
        current = makeWorker();
        worker = current;
        unhealthySince = undefined;
        retired.push(
          old.close().catch((err) => logger.warn({ err: oneLine(err) }, 'closing the replaced worker failed')),
        );
      })()
        .catch((err) => logger.warn({ err: oneLine(err) }, 'worker health check failed'))
        .finally(() => {
          checking = false;
        });
    }, healthIntervalMs);
    watchdog.unref();
    closers.push({ name: 'watchdog', close: async () => clearInterval(watchdog) });

    let sweeping: Promise<void> | undefined;
    const lostTargets = setInterval(() => {
      if (sweeping || stopping) return;
      const sweep = { ...lostTargetDeps, queue: jobs };
      sweeping = closeLostTargets(options.lostTargetAfterMs === undefined ? sweep : { ...sweep, olderThanMs: options.lostTargetAfterMs })
        .then(
          () => undefined,
          (err) => logger.warn({ err: oneLine(err) }, 'sweep of failed target jobs failed'),
        )
        .finally(() => {
          sweeping = undefined;
        });
    }, options.lostTargetIntervalMs ?? 60_000);
    lostTargets.unref();
    closers.push({
      name: 'lost-target sweep',
      close: async () => {
        clearInterval(lostTargets);
        await sweeping;
      },
    });

    const retention = startPeriodicPrune(db, config.retention, logger, options.retentionIntervalMs ?? 3_600_000);
    closers.push({ name: 'retention', close: () => retention.close() });

    let alerts: AlertDispatcher | undefined;
    if (options.alerts !== false) {
      const dispatcher = createAlertDispatcher({ db, config, logger: options.logger });
      alerts = dispatcher;
      dispatcher.start();
      closers.push({ name: 'alerts', close: () => dispatcher.stop() });
    }

    logger.info(
      { http: `http://${http.host}:${http.port}`, concurrency: config.concurrency, sources: config.sources.map((s) => s.name), alerts: Boolean(alerts) },
      'worker started',
    );

    let closing: Promise<void> | undefined;
    return {
      queue: jobs,
      http,
      metrics,
      db,
      get worker() {
        return current;
      },
      get workerGeneration() {
        return generation;
      },
      readiness,
      close() {
        stopping = true;
        closing ??= closeAll();
        return closing;
      },
    };
  } catch (err) {
    await closeAll().catch(() => undefined);
    throw err;
  }
}
