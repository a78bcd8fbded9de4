export { startWorkerService, type WorkerService, type WorkerServiceOptions } from './worker/service.ts';
export { triggerRuns, type TriggerOptions } from './trigger.ts';
export { queueSummary, type QueueSummary } from './redis/summary.ts';
export { reconcileSchedulers, enqueueManualRuns, defaultJobPolicy, type JobPolicy, type EnqueuedRun } from './jobs.ts';
export { QUEUE_NAME, queuePrefix, schedulerId } from './redis/names.ts';
export { RedisUnavailableError, assertNoEviction, openCommandClient } from './redis/connection.ts';
