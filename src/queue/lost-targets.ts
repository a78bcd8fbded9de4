// BullMQ (6.x) handles a job that stalled more than maxStalledCount times (its worker died or froze
// twice) without our processor: the stall check marks it with a deferred failure, and the next
// worker to take it fails it at once, emitting 'failed'. Nothing in the sync would record that
// target, and its run would stay 'running' for good. The worker records it from that event; a
// periodic sweep catches any the event could not record (Postgres away at that moment, say).
import type { Job, Queue } from 'bullmq';
import { targetsFor } from '../catalog/targets.ts';
import type { SourceConfig } from '../config/types.ts';
import type { Database } from '../db/database.ts';
import { recordFailureUnlessDone } from '../sync/outcome/record-failure.ts';
import { refreshRun } from '../sync/run/runs.ts';
import type { Logger } from '../util/logger.ts';
import type { SyncJobData, TargetJobData } from './jobs.ts';
import { targetJobId } from './names.ts';

export interface LostTargetDeps {
  db: Database;
  sources: readonly SourceConfig[];
  logger: Logger;
}

/** A job that BullMQ failed outside the processor: the reason it gave, as a list failure. */
class LostJobError extends Error {
  readonly code: string;
  constructor(reason: string) {
    super(`the worker job failed outside the sync: ${reason}`);
    this.code = /stalled/i.test(reason) ? 'job_stalled' : 'job_failed';
  }
}

/** Whether a failed job never reached the processor on its last try (BullMQ's deferred failure). */
export function failedOutsideProcessor(job: Job<SyncJobData>): job is Job<TargetJobData> {
  return job.data.kind === 'target' && Boolean(job.deferredFailure);
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

export interface LostTargetSweep extends LostTargetDeps {
  queue: Queue;
  /** Only runs open longer than this are looked at: a healthy run closes well before (default 5 min). */
  olderThanMs?: number;
}

/**
 * Looks through worker runs open longer than `olderThanMs` for target jobs in BullMQ's failed set
 * that the run has no snapshot of, and records them. Returns the number of targets recorded.
 */
export async function closeLostTargets(sweep: LostTargetSweep): Promise<number> {
  const { rows: runs } = await sweep.db.query<{ id: number; source: string; slot: string }>(
    `select id, source, slot from refdata.sync_runs
     where status = 'running' and trigger <> 'cli' and slot is not null
       and started_at < clock_timestamp() - make_interval(secs => $1::float8 / 1000)
     order by id limit 200`,
    [sweep.olderThanMs ?? 5 * 60_000],
  );
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
