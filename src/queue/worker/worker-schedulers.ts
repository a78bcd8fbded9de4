import type { Queue } from 'bullmq';
import type { SourceConfig } from '../../config/types.ts';
import type { Logger } from '../../util/logger.ts';
import { reconcileSchedulers, type JobPolicy } from '../jobs.ts';
import { schedulerId } from '../redis/names.ts';

/** One job scheduler per source, as configured now; schedulers of sources no longer configured go. */
export async function installSchedulers(queue: Queue, sources: SourceConfig[], policy: JobPolicy, logger: Logger, prefix: string): Promise<void> {
  const change = await reconcileSchedulers(queue, sources, policy);
  logger.info({ schedulers: change.upserted, kept: change.kept, removed: change.removed, prefix }, 'schedules installed');
}

/** Puts the schedulers back when any is missing from Redis (the watchdog checks while Redis answers). */
export async function restoreMissingSchedulers(queue: Queue, sources: SourceConfig[], policy: JobPolicy, logger: Logger): Promise<void> {
  const present = await Promise.all(sources.map((source) => queue.getJobScheduler(schedulerId(source))));
  if (present.every(Boolean)) return;
  const change = await reconcileSchedulers(queue, sources, policy);
  logger.warn({ schedulers: change.upserted }, 'schedulers were missing from Redis: reinstalled');
}
