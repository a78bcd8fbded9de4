import { Worker, type Job, type Processor } from 'bullmq';
import type { AppConfig } from '../../config/types.ts';
import type { WorkerMetrics } from '../../server/metrics.ts';
import { errorLine } from '../../util/error-line.ts';
import { causeOf } from '../../util/failure-cause.ts';
import type { Logger } from '../../util/logger.ts';
import type { QuietRepeats } from '../../util/quiet-repeats.ts';
import { workerConnection } from '../redis/connection.ts';
import type { SyncJobData } from '../jobs.ts';
import { failedOutsideProcessor, recordLostJob, type LostTargetDeps } from '../handlers/lost-targets.ts';
import { QUEUE_NAME } from '../redis/names.ts';
import type { JobResult } from '../handlers/processor.ts';

export interface BullWorkerParts {
  config: AppConfig;
  prefix: string;
  processor: Processor<SyncJobData, JobResult>;
  metrics: WorkerMetrics;
  logger: Logger;
  lostTargets: LostTargetDeps;
  /** The worker's warnings alike, shared with its processor. */
  repeats: QuietRepeats;
}

/** A BullMQ worker on the sync queue whose job outcomes are counted, logged and, when lost, recorded. */
export function createBullWorker(parts: BullWorkerParts): Worker<SyncJobData, JobResult> {
  const { config, metrics, logger } = parts;
  const connection = workerConnection(config.redisUrl, config);
  const worker = new Worker<SyncJobData, JobResult>(QUEUE_NAME, parts.processor, {
    connection,
    prefix: parts.prefix,
    concurrency: config.concurrency,
    name: `refsync-${process.pid}`,
    // Jobs finished by this worker are trimmed as they finish (see jobOptions for the figures).
    removeOnComplete: { count: 1_000, age: 24 * 3600 },
    removeOnFail: { count: 5_000, age: 14 * 24 * 3600 },
  });
  worker.on('error', (err) => logger.warn({ err: errorLine(err) }, 'worker connection error'));
  // A cluster client given to BullMQ is the worker's own but not closed by BullMQ: close it after.
  if ('isCluster' in connection) worker.on('closed', () => connection.disconnect());
  worker.on('completed', (job: Job<SyncJobData>) => metrics.job(job.name, 'completed'));
  worker.on('failed', (job: Job<SyncJobData> | undefined, err: Error) => {
    if (job) onJobFailed(parts, job, err);
  });
  return worker;
}

/**
 * A failed attempt: counted as retried or failed, logged, and, when BullMQ failed the job without
 * the processor running (a stalled job out of attempts), what it left of its run recorded as failed.
 */
function onJobFailed({ metrics, logger, lostTargets, repeats }: BullWorkerParts, job: Job<SyncJobData>, err: Error): void {
  const final = err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
  metrics.job(job.name, final ? 'failed' : 'retried');
  // At warn either way: a failed attempt is what an operator looks for when Postgres or the upstream
  // refuses. Attempts that fail alike (every job of a run, when the host or Postgres is away) are
  // warned of once at a time; the others are at debug, counted in the next warning.
  const msg = final ? 'job failed' : 'job will retry';
  // Alike by cause: a failure of the host differs from list to list by its request only (the final
  // attempt's error is target-job.ts's UnrecoverableError, its code before the list's message).
  const line = errorLine(err);
  const unrecoverable = /^([a-z_]+): ((?:GET|POST) \/.*)$/.exec(line);
  const code = (err as { code?: unknown }).code;
  const cause = unrecoverable ? causeOf(unrecoverable[2]!, unrecoverable[1]) : causeOf(line, typeof code === 'string' ? code : undefined);
  repeats.warn(logger, [msg, job.name, cause], { jobId: job.id, attempt: job.attemptsMade, err: errorLine(err) }, msg);
  if (failedOutsideProcessor(job)) {
    recordLostJob(lostTargets, job).catch((e) =>
      logger.warn({ jobId: job.id, err: errorLine(e) }, 'recording a target job failed outside the sync failed; the sweep will retry'),
    );
  }
}
