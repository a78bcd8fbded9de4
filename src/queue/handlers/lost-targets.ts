// BullMQ (6.x) handles a job that stalled more than maxStalledCount times (its worker died or froze
// twice) without our processor: the stall check marks it with a deferred failure, and the next
// worker to take it fails it at once, emitting 'failed'. Nothing in the sync would record that
// target, and its run would stay 'running' for good. The worker records it from that event; a
// periodic sweep catches any the event could not record (Postgres away at that moment, say). A run
// job failed that way (it died twice while syncing its small lists itself, or before it fanned out)
// leaves the targets it had not reached with no job at all: those are recorded from the event too.
import type { Job, Queue } from 'bullmq';
import { targetsFor } from '../../catalog/catalog.ts';
import type { SourceConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import { recordFailureUnlessDone } from '../../sync/outcome/target-outcome.ts';
import { refreshRun } from '../../sync/run/runs.ts';
import { ListFailure, type ErrorCode } from '../../util/error-codes.ts';
import type { Logger } from '../../util/logger.ts';
import type { RunJobData, SyncJobData, TargetJobData } from '../jobs.ts';
import { targetJobId } from '../redis/names.ts';
import { slotOf } from './run-job.ts';
import { runningRunOfSlot, runningQueuedRuns } from '../../sync/sql.ts';

export interface LostTargetDeps {
  db: Database;
  sources: readonly SourceConfig[];
  logger: Logger;
  queue: Pick<Queue, 'getJobState' | 'getJob'>;
}

/** A job that BullMQ failed outside the processor: the reason it gave, as a list failure. */
class LostJobError extends ListFailure {
  readonly code: ErrorCode;
  constructor(reason: string) {
    super(`the worker job failed outside the sync: ${reason}`);
    this.code = /stalled/i.test(reason) ? 'job_stalled' : 'job_failed';
  }
}

/** Whether a failed job never reached the processor on its last try (BullMQ's deferred failure). */
export function failedOutsideProcessor(job: Job<SyncJobData>): boolean {
  return Boolean(job.deferredFailure);
}

/** Records what a job failed outside the processor leaves unrecorded in its run. */
export function recordLostJob(deps: LostTargetDeps, job: Job<SyncJobData>): Promise<unknown> {
  return job.data.kind === 'target' ? recordLostTarget(deps, job as Job<TargetJobData>) : recordLostRun(deps, job as Job<RunJobData>);
}

/**
 * Records a failed target job's target as failed in its run, unless the run already has a snapshot
 * of it (checked under the target's lock, so every worker may try), then brings the run up to date.
 * Returns the snapshot recorded, or undefined when there was nothing to record.
 */
export async function recordLostTarget(deps: LostTargetDeps, job: Pick<Job<TargetJobData>, 'id' | 'data' | 'failedReason'>): Promise<number | undefined> {
  const { source: name, list, variant, runId } = job.data;
  const source = deps.sources.find((s) => s.name === name);
  const target = source && targetsFor(source, [list]).find((t) => t.variant === variant);
  if (!target) return undefined;
  const reason = job.failedReason || 'no reason given';
  const snapshotId = await recordFailureUnlessDone(deps.db, target, runId, new LostJobError(reason), 0);
  if (snapshotId !== undefined) {
    deps.logger.warn({ runId, jobId: job.id, reason, snapshotId }, 'target job failed outside the sync: recorded as failed');
  }
  await refreshRun(deps.db, runId, source);
  return snapshotId;
}

/**
 * Records as failed each target of a lost run job's run that has neither a snapshot in the run nor a
 * target job (one queued would record its own), then brings the run up to date. Returns the number
 * recorded; none when the run job never opened its run or the run is closed.
 */
export async function recordLostRun(deps: LostTargetDeps, job: Pick<Job<RunJobData>, 'id' | 'data' | 'failedReason' | 'opts' | 'timestamp'>): Promise<number> {
  const source = deps.sources.find((s) => s.name === job.data.source);
  if (!source) return 0;
  const slot = slotOf(job);
  const { rows } = await deps.db.query<{ id: number }>(runningRunOfSlot, [source.name, slot]);
  const runId = rows[0] && Number(rows[0].id);
  if (runId === undefined) return 0;
  const reason = job.failedReason || 'no reason given';
  let recorded = 0;
  for (const target of targetsFor(source, job.data.lists)) {
    if ((await deps.queue.getJobState(targetJobId(source.name, target.list.key, target.variant, slot))) !== 'unknown') continue;
    if ((await recordFailureUnlessDone(deps.db, target, runId, new LostJobError(reason), 0)) !== undefined) recorded += 1;
  }
  if (recorded > 0) deps.logger.warn({ runId, jobId: job.id, reason, recorded }, 'run job failed outside the sync: its targets left recorded as failed');
  await refreshRun(deps.db, runId, source);
  return recorded;
}

export interface LostTargetSweep extends LostTargetDeps {
  /** Only runs open longer than this are looked at: a healthy run closes well before (default 5 min). */
  olderThanMs?: number;
}

/**
 * Looks through worker runs open longer than `olderThanMs` for target jobs in BullMQ's failed set
 * that the run has no snapshot of, and records them. Returns the number of targets recorded.
 */
export async function closeLostTargets(sweep: LostTargetSweep): Promise<number> {
  const { rows: runs } = await sweep.db.query<{ id: number; source: string; slot: string }>(runningQueuedRuns, [sweep.olderThanMs ?? 5 * 60_000]);
  let recorded = 0;
  for (const run of runs) {
    const source = sweep.sources.find((s) => s.name === run.source);
    if (!source) continue;
    for (const target of targetsFor(source)) {
      const jobId = targetJobId(source.name, target.list.key, target.variant, run.slot);
      // A target outside the run (a trigger for some lists) has no job: 'unknown', left alone.
      if ((await sweep.queue.getJobState(jobId)) !== 'failed') continue;
      const job = (await sweep.queue.getJob(jobId)) as Job<TargetJobData> | undefined;
      if (job && (await recordLostTarget(sweep, job)) !== undefined) recorded += 1;
    }
  }
  return recorded;
}
