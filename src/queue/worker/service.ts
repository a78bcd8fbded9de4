// `refsync worker` as a library: everything a worker process runs, started in dependency order and
// closed in reverse, keeping the first error. The CLI adds signals and exit codes; tests start it
// in process.
import { getHeapStatistics } from 'node:v8';
import type { Queue, Worker } from 'bullmq';
import { createAlertDispatcher } from '../../alerts/dispatcher.ts';
import { ConfigError } from '../../config/errors.ts';
import type { AppConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import type { SchemaCheck } from '../../db/schema-version.ts';
import { startPeriodicPrune } from '../../retention/periodic.ts';
import type { HttpServer, ReadyReport } from '../../server/http.ts';
import { WorkerMetrics } from '../../server/metrics.ts';
import type { WorkerMemory } from '../../memory/target-memory.ts';
import type { SyncTuning } from '../../sync/sync-target.ts';
import type { UpstreamClientOptions } from '../../upstream/client.ts';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';
import { createBullWorker } from './bull-worker.ts';
import type { RedisClient } from '../redis/connection.ts';
import { JobWorker } from './job-worker.ts';
import { defaultJobPolicy, type JobPolicy, type SyncJobData } from '../jobs.ts';
import { startLostTargetSweep } from '../handlers/lost-target-sweep.ts';
import { queueKeyPrefix } from '../redis/names.ts';
import { createProcessor } from '../handlers/processor.ts';
import { createSchemaWatch, DEFAULT_SCHEMA_CHECK_INTERVAL_MS } from './schema-watch.ts';
import { ResourceStack } from './resource-stack.ts';
import { SourceGate } from '../admission/source-gate.ts';
import { SyncSlots } from '../admission/sync-slots.ts';
import { upstreamClients } from '../admission/upstream-clients.ts';
import { openWorkerDatabase } from './worker-database.ts';
import { workerPoolSize } from '../../db/connection-budget.ts';
import { openWorkerMemory } from '../../memory/worker-memory.ts';
import { startWorkerHttp } from './worker-http.ts';
import { openWorkerQueue } from './worker-queue.ts';
import { workerReadiness } from './worker-readiness.ts';
import { installSchedulers, restoreMissingSchedulers } from './worker-schedulers.ts';
import { startWatchdog } from './worker-watchdog.ts';
import { QuietRepeats } from '../../util/quiet-repeats.ts';
import { warnUnindexedUsage } from '../../impact/usage-index.ts';

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
  /** How often the database is checked for a migration newer than this refsync (default and most 60 s; schema-watch.ts). */
  schemaCheckIntervalMs?: number;
  /** The sync's tuning (src/sync/sync-target.ts): tests lower the thresholds so that small lists take the large lists' ways. */
  tuning?: Partial<SyncTuning>;
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
  /**
   * Settles when the worker stopped itself because a newer refsync migrated the database (it has
   * closed everything by then): with the schema versions seen. Never settles otherwise.
   */
  readonly stoppedForNewerSchema: Promise<SchemaCheck>;
}

/** What the steps of startWorkerService open one after another; readiness and metrics ask for them before they exist. */
interface StartedParts {
  queue?: Queue<SyncJobData>;
  redis?: RedisClient;
  jobs?: JobWorker;
  stopping: boolean;
  closing?: Promise<void>;
}

/** Marks the worker stopping (readiness answers 503, the timers stand down) and closes it, once. */
function closeOnce(parts: StartedParts, resources: ResourceStack): Promise<void> {
  parts.stopping = true;
  parts.closing ??= resources.closeAll();
  return parts.closing;
}

/**
 * The schema watch: when a newer refsync migrates the database, the worker closes itself (the jobs
 * it holds finish first) and `stoppedForNewerSchema` resolves with what was found.
 */
function watchSchema(db: Database, logger: Logger, options: WorkerServiceOptions, parts: StartedParts, resources: ResourceStack) {
  const stoppedForNewerSchema = Promise.withResolvers<SchemaCheck>();
  const schema = createSchemaWatch({
    db,
    logger,
    intervalMs: options.schemaCheckIntervalMs ?? DEFAULT_SCHEMA_CHECK_INTERVAL_MS,
    onNewer: (check) =>
      void closeOnce(parts, resources)
        .catch((err: unknown) => logger.error({ err: errorLine(err) }, 'closing the worker after a newer migration failed'))
        .finally(() => stoppedForNewerSchema.resolve(check)),
  });
  return { schema, stoppedForNewerSchema };
}

/**
 * Starts a worker, step by step in the order of its life: Postgres, the HTTP server (so /readyz
 * answers while the rest starts), Redis and the queue, the schedulers, the job worker, then the
 * periodic tasks (watchdog, lost-target sweep, retention, alerts). Each step registers how it is
 * closed; a step that fails closes what the earlier ones opened.
 */
export async function startWorkerService(config: AppConfig, options: WorkerServiceOptions): Promise<WorkerService> {
  const logger = options.logger.child({ component: 'worker' });
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL: is required for refsync worker (embedded PGlite is for sync and demo only)');
  const prefix = queueKeyPrefix(config, options.prefix);
  const policy: JobPolicy = { ...defaultJobPolicy, ...options.policy };
  const resources = new ResourceStack(logger);
  const parts: StartedParts = { stopping: false };
  try {
    // Its LISTEN (the alert dispatcher's wake-up) is one connection of the budget, whatever server it is on.
    const listens = options.alerts !== false && config.listenDatabaseUrl !== 'off';
    const poolSize = workerPoolSize(config.dbMaxConnections, config.concurrency, listens);
    const db = await openWorkerDatabase(config.databaseUrl, poolSize, logger, resources);
    const { schema, stoppedForNewerSchema } = watchSchema(db, logger, options, parts, resources);
    const memory = await openWorkerMemory(config, db, logger);
    await warnUnindexedUsage(db, config.sources, logger);
    const metrics = new WorkerMetrics({
      db,
      probeDatabase: () => db.probe(),
      sources: config.sources,
      logger,
      sourceLabel: config.metricsSourceLabel,
      queueCounts: async () =>
        parts.queue ? parts.queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed') : {},
    });
    const readiness = workerReadiness({
      db,
      redisUrl: config.redisUrl,
      reach: config,
      redis: () => parts.redis,
      worker: () => parts.jobs?.current,
      stopping: () => parts.stopping,
    });
    const { web, http } = await startWorkerHttp(config, { db, metrics, readiness }, resources);

    const { commands, queue } = await openWorkerQueue(config, prefix, logger, resources);
    parts.redis = commands;
    parts.queue = queue;
    web.setQueues([queue]);
    await installSchedulers(queue, config.sources, policy, logger, prefix);

    const jobs = startJobWorker(config, options, { db, queue, commands, prefix, policy, metrics, logger, newerSchema: schema.newerSchema, memory }, resources);
    parts.jobs = jobs;
    schema.start();
    resources.push('schema watch', () => schema.close());
    startPeriodicTasks(config, options, { db, queue, commands, policy, jobs, logger, stopping: () => parts.stopping }, resources);
    const alerts = options.alerts !== false;
    if (alerts) startAlerts(db, config, options.logger, resources);

    logWorkerStarted(logger, config, http, memory, alerts);
    return serviceHandle({ queue, http, metrics, db, readiness, stoppedForNewerSchema: stoppedForNewerSchema.promise }, jobs, parts, resources);
  } catch (err) {
    await resources.closeAll().catch(() => undefined);
    throw err;
  }
}

/** The startup line: where the worker serves, what it syncs, and the memory it was given. */
function logWorkerStarted(
  logger: Logger,
  config: AppConfig,
  http: { host: string; port: number },
  memory: { budget: { total: number }; from: string },
  alerts: boolean,
): void {
  logger.info(
    {
      http: `http://${http.host}:${http.port}`,
      concurrency: config.concurrency,
      sources: config.sources.map((s) => s.name),
      alerts,
      memoryBudgetMib: Math.round(memory.budget.total / 1024 / 1024),
      memoryBudgetFrom: memory.from,
      // V8's old-space limit (and young generation): half the budget when started as `refsync worker` (src/memory/heap-flags.ts).
      heapLimitMib: Math.round(getHeapStatistics().heap_size_limit / 1024 / 1024),
    },
    'worker started',
  );
}

/** The started worker as its callers see it; close() marks it stopping first, so readiness and the timers stand down. */
function serviceHandle(
  fixed: Pick<WorkerService, 'queue' | 'http' | 'metrics' | 'db' | 'readiness' | 'stoppedForNewerSchema'>,
  jobs: JobWorker,
  parts: StartedParts,
  resources: ResourceStack,
): WorkerService {
  return {
    ...fixed,
    get worker() {
      return jobs.current;
    },
    get workerGeneration() {
      return jobs.generation;
    },
    close: () => closeOnce(parts, resources),
  };
}

interface JobWorkerParts {
  db: Database;
  queue: Queue<SyncJobData>;
  commands: RedisClient;
  prefix: string;
  policy: JobPolicy;
  metrics: WorkerMetrics;
  logger: Logger;
  newerSchema(): Promise<boolean>;
  memory: WorkerMemory;
}

/** The processor (with its upstream clients and source gate) and the BullMQ worker that runs it. */
function startJobWorker(config: AppConfig, options: WorkerServiceOptions, parts: JobWorkerParts, resources: ResourceStack): JobWorker {
  const { db, queue, prefix, policy, metrics, logger, memory } = parts;
  const repeats = new QuietRepeats();
  const processor = createProcessor({
    memory,
    ...(options.tuning ? { tuning: options.tuning } : {}),
    db,
    queue,
    sources: config.sources,
    clientFor: upstreamClients(options.logger, options.clientOptions, metrics, resources),
    policy,
    logger,
    metrics,
    gate: new SourceGate(parts.commands, prefix),
    syncSlots: new SyncSlots(config.concurrency),
    newerSchema: parts.newerSchema,
    repeats,
  });
  const lostTargets = { db, sources: config.sources, logger, queue };
  const jobs = new JobWorker(() => createBullWorker({ config, prefix, processor, metrics, logger, lostTargets, repeats }), logger);
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 30_000;
  resources.push('worker', () => jobs.close(shutdownTimeoutMs));
  return jobs;
}

interface PeriodicParts {
  db: Database;
  queue: Queue<SyncJobData>;
  commands: RedisClient;
  policy: JobPolicy;
  jobs: JobWorker;
  logger: Logger;
  stopping: () => boolean;
}

/** The worker's timers: its own health check, the sweep of lost target jobs, and retention. */
function startPeriodicTasks(config: AppConfig, options: WorkerServiceOptions, parts: PeriodicParts, resources: ResourceStack): void {
  const { db, queue, logger, stopping } = parts;
  const watchdog = startWatchdog({
    commands: parts.commands,
    jobs: parts.jobs,
    restoreSchedulers: () => restoreMissingSchedulers(queue, config.sources, parts.policy, logger),
    intervalMs: options.healthIntervalMs ?? 5_000,
    recreateAfterMs: options.recreateAfterMs ?? 30_000,
    logger,
    stopping,
  });
  resources.push('watchdog', () => watchdog.close());

  const sweep = { db, sources: config.sources, logger, queue };
  const olderThan = options.lostTargetAfterMs === undefined ? {} : { olderThanMs: options.lostTargetAfterMs };
  const lostTargets = startLostTargetSweep({ ...sweep, ...olderThan }, options.lostTargetIntervalMs ?? 60_000, stopping);
  resources.push('lost-target sweep', () => lostTargets.close());

  const retention = startPeriodicPrune(db, config.retention, logger, options.retentionIntervalMs ?? 3_600_000);
  resources.push('retention', () => retention.close());
}

/** The alert outbox dispatcher; every worker may run one, they share the outbox by SKIP LOCKED. */
function startAlerts(db: Database, config: AppConfig, logger: Logger, resources: ResourceStack): void {
  const dispatcher = createAlertDispatcher({ db, config, logger });
  dispatcher.start();
  resources.push('alerts', () => dispatcher.stop());
}
