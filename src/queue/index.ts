export { startWorkerService, type WorkerService, type WorkerServiceOptions } from './service.ts';
export { triggerRuns, type TriggerOptions } from './trigger.ts';
export { queueSummary, type QueueSummary } from './summary.ts';
export { reconcileSchedulers, enqueueManualRuns, defaultJobPolicy, type JobPolicy, type EnqueuedRun } from './jobs.ts';
export { QUEUE_NAME, queuePrefix, schedulerId } from './names.ts';
export { RedisUnavailableError, assertNoEviction, openCommandClient } from './connection.ts';
