// What a worker does with each job: a run job syncs its small lists and fans out the rest
// (run-job.ts, inline-targets.ts), a target job syncs one list and settles its outcome (target-job.ts).
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import type { RunJobData, SyncJobData, TargetJobData } from '../jobs.ts';
import type { JobResult, ProcessorDeps } from './processor-deps.ts';
import { processRunJob } from './run-job.ts';
import { processTargetJob } from './target-job.ts';

export type { JobResult, ProcessorDeps } from './processor-deps.ts';

export function createProcessor(deps: ProcessorDeps) {
  return async function process(job: Job<SyncJobData>, token?: string, signal?: AbortSignal): Promise<JobResult> {
    const data = job.data;
    if (data.kind === 'run') {
      // The database is newer than this worker: the job goes back to waiting, untouched and with no
      // attempt spent, for a worker of the newer refsync (this one has stopped taking jobs).
      if (await deps.newerSchema()) {
        await job.moveToWait(token);
        throw new WaitingError();
      }
      return processRunJob(deps, job as Job<RunJobData>, signal ?? new AbortController().signal);
    }
    if (data.kind === 'target') return processTargetJob(deps, job as Job<TargetJobData>, token, signal ?? new AbortController().signal);
    throw new UnrecoverableError(`unknown job kind '${(data as { kind?: string }).kind}'`);
  };
}
