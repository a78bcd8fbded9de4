import type { Span } from '@opentelemetry/api';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { targetName, targetsFor, type Target } from '../../catalog/catalog.ts';
import type { SourceConfig } from '../../config/types.ts';
import { ApplyBatch } from '../../sync/batch/apply-batch.ts';
import { syncedInRun, outcomeError, type TargetOutcome } from '../../sync/outcome/target-outcome.ts';
import { failRun, refreshRun } from '../../sync/run/runs.ts';
import { syncInBatches } from '../../sync/run/run-sync.ts';
import { inSpan } from '../../tracing/spans.ts';
import { causeOf } from '../../util/failure-cause.ts';
import type { Logger } from '../../util/logger.ts';
import type { TargetJobData } from '../jobs.ts';
import { jobProgressReporter } from './job-progress.ts';
import { sourceFor, type JobResult, type ProcessorDeps } from './processor-deps.ts';
import { verdictOn } from './target-verdict.ts';
import { settleOutcome, syncInWorker } from './worker-sync.ts';

// A target job: admitted by its source's gate, synced, and its outcome settled in one place
// (syncAndSettle, by target-verdict.ts's policy): completed, retried with nothing recorded, put back
// after a 429 without using an attempt, or recorded and failed. Its list is a batch of one
// (ApplyBatch.ofOne), synced as every list is (syncInBatches): an unchanged fetch is recorded by one
// statement that counts the run's progress too, whose commit waits for the WAL flush, so the job
// completes only once its work is durable.

export async function processTargetJob(deps: ProcessorDeps, job: Job<TargetJobData>, token: string | undefined, signal: AbortSignal): Promise<JobResult> {
  const source = sourceFor(deps, job.data.source);
  const admission = await deps.gate.admit(source.name, job.id!, source.maxConcurrentJobs);
  if (!admission.admitted) {
    deps.logger.debug({ source: source.name, jobId: job.id, waitMs: admission.waitMs, reason: admission.reason }, 'target job put back');
    return later(job, token, admission.waitMs);
  }
  try {
    const attributes = { 'refsync.source': source.name, 'refsync.list': job.data.list, 'refsync.variant': job.data.variant, 'refsync.run_id': job.data.runId };
    // One span per admitted attempt, under the run's span; a job put back for later is no failure.
    return await inSpan(
      'refsync.target',
      { parent: job.data.trace, target: true, attributes },
      (span) => syncAdmitted(deps, job, token, signal, source, span),
      (err) => err instanceof DelayedError,
    );
  } finally {
    await admission.slot.release().catch(() => undefined);
  }
}

async function syncAdmitted(
  deps: ProcessorDeps,
  job: Job<TargetJobData>,
  token: string | undefined,
  signal: AbortSignal,
  source: SourceConfig,
  span: Span,
): Promise<JobResult> {
  const { runId } = job.data;
  const target = targetsFor(source, [job.data.list]).find((t) => t.variant === job.data.variant);
  if (!target) {
    const message = `target ${job.data.source}/${job.data.list}/${job.data.variant} is no longer configured`;
    await failRun(deps.db, runId, message, source);
    throw new UnrecoverableError(message);
  }
  // The job ids already stop a slot from queueing a target twice; this covers a job that ran
  // to the end but was retried (its completion lost with a Redis outage) or trimmed and re-added.
  if (mayHaveRunBefore(job) && (await syncedInRun(deps.db, runId, target))) {
    span.setAttribute('refsync.status', 'done-before');
    await refreshRun(deps.db, runId, source);
    return { kind: 'target', runId, status: 'done-before', skipped: true };
  }

  // Its list is a batch of one in one lane, synced the way every list is (syncInBatches): written as
  // it is taken, and settled here by the job's verdict. What the job throws (a wait, a retry, a
  // failure) comes out as it was thrown.
  const batch = ApplyBatch.ofOne();
  const [result] = await syncInBatches([target], {
    lanes: 1,
    batchOf: () => batch,
    sync: () => syncAndSettle({ deps, job, token, signal, source, span }, target, batch),
  });
  return result!;
}

/** An admitted target job, as its sync sees it. */
interface AdmittedJob {
  deps: ProcessorDeps;
  job: Job<TargetJobData>;
  token: string | undefined;
  signal: AbortSignal;
  source: SourceConfig;
  span: Span;
}

/** Syncs the job's target in its batch of one and settles it by the job's verdict: completed, put back, retried or failed. */
async function syncAndSettle({ deps, job, token, signal, source, span }: AdmittedJob, target: Target, batch: ApplyBatch): Promise<JobResult> {
  const { runId } = job.data;
  const attempts = job.opts.attempts ?? 1;
  const attempt = { last: job.attemptsMade + 1 >= attempts, rateLimited: job.data.rateLimited ?? 0 };
  const log = deps.logger.child({ target: targetName(target), runId, jobId: job.id, attempt: job.attemptsMade + 1 });
  const outcome = await syncOrThrow(deps, job, signal, source, target, attempt.last, log, batch);
  const verdict = verdictOn(outcome, attempt);
  span.setAttribute('refsync.status', verdict.kind === 'wait' ? 'rate_limited' : verdict.kind === 'retry' ? 'retrying' : outcome.status);
  if (verdict.kind === 'wait') {
    log.warn({ retryAfterMs: verdict.ms }, "rate limited by the service: this source's jobs wait, the others go on");
    await deps.gate.coolDown(source.name, verdict.ms);
    await job.updateData({ ...job.data, rateLimited: attempt.rateLimited + 1 });
    return later(job, token, verdict.ms);
  }
  if (verdict.kind === 'retry') {
    // Every job of a source stopped by one unreachable host fails alike: warned of once at a time.
    const { failed } = verdict;
    deps.repeats.warn(
      log,
      ['list failed; will retry', source.name, failed.errorCode, causeOf(failed.error, failed.errorCode)],
      { code: failed.errorCode, err: failed.error },
      'list failed; will retry',
    );
    throw failed.failure;
  }
  const settled = await settleOutcome(deps, outcome, runId, log, true);
  // A failed job shows in the dashboard; a 404 records the list as unavailable and completes.
  if (verdict.kind === 'fail') throw new UnrecoverableError(`${outcomeError(settled)?.errorCode ?? 'failed'}: ${outcomeError(settled)?.error ?? ''}`);
  const result: JobResult = { kind: 'target', runId, status: settled.status, counts: settled.counts };
  if (settled.snapshotId !== undefined) result.snapshotId = settled.snapshotId;
  return result;
}

/**
 * The target's sync, its job progress reported. A database error is thrown for BullMQ to retry;
 * after the last attempt the run cannot complete and is closed as failed (best effort: the
 * database may still be away).
 */
async function syncOrThrow(
  deps: ProcessorDeps,
  job: Job<TargetJobData>,
  signal: AbortSignal,
  source: SourceConfig,
  target: Target,
  lastAttempt: boolean,
  log: Logger,
  batch: ApplyBatch,
): Promise<TargetOutcome> {
  const progress = jobProgressReporter(job);
  try {
    const outcome = await syncInWorker(deps, target, {
      runId: job.data.runId,
      signal,
      acceptRemovals: job.data.acceptRemovals === true,
      acceptSchema: job.data.acceptSchema === true,
      log,
      onProgress: progress.onProgress,
      advanceRun: true,
      batch,
    });
    await progress.finish();
    return outcome;
  } catch (err) {
    if (signal.aborted) {
      // Stopped by shutdown: nothing was applied (one transaction), so a later attempt starts clean.
      throw new Error(`${targetName(target)}: aborted (${String((signal.reason as Error)?.message ?? signal.reason)})`);
    }
    if (lastAttempt) await failRun(deps.db, job.data.runId, `database error: ${(err as Error).message}`, source).catch(() => undefined);
    throw err;
  }
}

/**
 * Whether the run may already hold a snapshot of this job's target: the job ran before (a retry,
 * or a stall, which is how a completion lost after the commit comes back), or a second fan-out of
 * the run queued it. A first attempt from the run's first fan-out cannot have run: it skips the
 * check, a round trip to Postgres that every unchanged target of every slot would pay.
 */
function mayHaveRunBefore(job: Job<TargetJobData>): boolean {
  return job.attemptsMade > 0 || (job.stalledCounter ?? 0) > 0 || job.data.checkDone === true;
}

/** Puts the job back for waitMs: not a failed attempt, so nothing is recorded and no retry is used. */
async function later(job: Job<TargetJobData>, token: string | undefined, waitMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + waitMs, token);
  throw new DelayedError();
}
