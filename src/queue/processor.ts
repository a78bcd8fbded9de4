// What a worker does with each job. The sync pipeline does the work; this file decides what BullMQ
// should do with the result: retry (transient failures, with nothing recorded), fail at once and
// record (failures retrying cannot heal), or put the job back for later without counting an
// attempt (its source cools down after a 429, or already runs as many jobs as it may).
import { DelayedError, UnrecoverableError, type Job, type Queue } from 'bullmq';
import { targetsFor, type Target } from '../catalog/targets.ts';
import type { SourceConfig } from '../config/types.ts';
import type { Database } from '../db/database.ts';
import { isListFailure, isUnavailable, recordFailure, syncedInRun } from '../sync/failure.ts';
import { failRun, refreshRun, startRun } from '../sync/runs.ts';
import { syncTarget, type PageSource, type TargetOutcome } from '../sync/sync-target.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Logger } from '../util/logger.ts';
import { jobOptions, type JobPolicy, type RunJobData, type SyncJobData, type TargetJobData } from './jobs.ts';
import { jobProgressReporter } from './job-progress.ts';
import { scheduleSlot, targetJobId } from './names.ts';
import type { SourceGate } from './source-gate.ts';
import type { WorkerMetrics } from '../server/metrics.ts';

export interface ProcessorDeps {
  db: Database;
  queue: Queue;
  sources: SourceConfig[];
  clientFor(source: SourceConfig): PageSource;
  policy: JobPolicy;
  logger: Logger;
  metrics?: WorkerMetrics;
  /** Per-source cool-downs and job slots, shared by every worker through Redis. */
  gate: SourceGate;
}

/** Times a job may be put back by a 429 before it is failed as rate limited. */
const RATE_LIMIT_TIMES = 10;
/** BullMQ's highest priority number (the lowest priority). */
const MAX_PRIORITY = 2_097_151;
/** Retry-After when the service sent none with its 429. */
const DEFAULT_RATE_LIMIT_MS = 60_000;

export type JobResult =
  | { kind: 'run'; runId: number; slot: string; targets: number; fannedOut: boolean }
  | { kind: 'target'; runId: number; status: string; snapshotId?: number; skipped?: boolean; counts?: Record<string, number> };

/** The slot of a run job: the trigger's, or the instant a scheduler planned the job (its id ends with it). */
export function slotOf(job: Job<RunJobData>): string {
  if (job.data.slot) return job.data.slot;
  const planned = /:(\d+)$/.exec(job.id ?? '')?.[1] ?? (job.opts as { prevMillis?: number }).prevMillis;
  return scheduleSlot(Number(planned ?? job.timestamp));
}

function describe(target: Target): string {
  return `${target.source.name}/${target.list.key}${target.variant ? `/${target.variant}` : ''}`;
}

export function createProcessor(deps: ProcessorDeps) {
  const byName = new Map(deps.sources.map((s) => [s.name, s]));

  function sourceFor(name: string): SourceConfig {
    const source = byName.get(name);
    if (!source) throw new UnrecoverableError(`source '${name}' is not configured in this worker`);
    return source;
  }

  async function processRun(job: Job<RunJobData>): Promise<JobResult> {
    const source = sourceFor(job.data.source);
    const slot = slotOf(job);
    const targets = targetsFor(source, job.data.lists);
    const run = await startRun(deps.db, { source, trigger: job.data.trigger, targetsTotal: targets.length, slot });
    if (!run.created) {
      // A second job for the same slot (two triggers, or this job retried after a crash): fan out
      // again only while the run is open; the target jobs' ids and snapshot check keep it at once.
      const { rows } = await deps.db.query<{ status: string }>('select status from refdata.sync_runs where id = $1', [run.id]);
      if (rows[0]?.status !== 'running') return { kind: 'run', runId: run.id, slot, targets: targets.length, fannedOut: false };
    }
    if (targets.length === 0) {
      // Nothing to fan out: refreshRun closes a run of 0 of 0 targets as succeeded.
      await refreshRun(deps.db, run.id, source);
      return { kind: 'run', runId: run.id, slot, targets: 0, fannedOut: false };
    }
    const opts = jobOptions(deps.policy);
    await deps.queue.addBulk(
      targets.map((t, i) => {
        const data: TargetJobData = { kind: 'target', source: source.name, list: t.list.key, variant: t.variant, runId: run.id, slot };
        // The n-th target of every source goes before the (n+1)-th of any: the slots take the
        // sources in turn rather than one source's lists all at once (lower runs first in BullMQ).
        const priority = Math.min(i + 1, MAX_PRIORITY);
        if (job.data.acceptRemovals) data.acceptRemovals = true;
        return { name: 'target', data, opts: { ...opts, priority, jobId: targetJobId(source.name, t.list.key, t.variant, slot) } };
      }),
    );
    deps.logger.info({ source: source.name, runId: run.id, slot, targets: targets.length, trigger: job.data.trigger }, 'run fanned out');
    return { kind: 'run', runId: run.id, slot, targets: targets.length, fannedOut: true };
  }

  function observe(outcome: TargetOutcome): void {
    const input = {
      source: outcome.target.source.name,
      list: outcome.target.list.key,
      variant: outcome.target.variant,
      status: outcome.status,
      durationMs: outcome.durationMs,
      counts: outcome.counts,
    };
    deps.metrics?.target(outcome.errorCode ? { ...input, errorCode: outcome.errorCode } : input);
  }

  /** Puts the job back for waitMs: not a failed attempt, so nothing is recorded and no retry is used. */
  async function later(job: Job<TargetJobData>, token: string | undefined, waitMs: number): Promise<never> {
    await job.moveToDelayed(Date.now() + waitMs, token);
    throw new DelayedError();
  }

  async function processTarget(job: Job<TargetJobData>, token: string | undefined, signal: AbortSignal): Promise<JobResult> {
    const source = sourceFor(job.data.source);
    const admission = await deps.gate.admit(source.name, job.id!, source.maxConcurrentJobs);
    if (!admission.admitted) {
      deps.logger.debug({ source: source.name, jobId: job.id, waitMs: admission.waitMs, reason: admission.reason }, 'target job put back');
      return later(job, token, admission.waitMs);
    }
    try {
      return await syncAdmitted(job, token, signal, source);
    } finally {
      await admission.slot.release().catch(() => undefined);
    }
  }

  async function syncAdmitted(job: Job<TargetJobData>, token: string | undefined, signal: AbortSignal, source: SourceConfig): Promise<JobResult> {
    const { runId } = job.data;
    const target = targetsFor(source, [job.data.list]).find((t) => t.variant === job.data.variant);
    if (!target) {
      const message = `target ${job.data.source}/${job.data.list}/${job.data.variant} is no longer configured`;
      await failRun(deps.db, runId, message, source);
      throw new UnrecoverableError(message);
    }
    // The job ids already stop a slot from queueing a target twice; this covers a job that ran
    // to the end but was retried (its completion lost with a Redis outage) or trimmed and re-added.
    if (await syncedInRun(deps.db, runId, target)) {
      await refreshRun(deps.db, runId, source);
      return { kind: 'target', runId, status: 'done-before', skipped: true };
    }

    const attempts = job.opts.attempts ?? 1;
    const lastAttempt = job.attemptsMade + 1 >= attempts;
    const started = performance.now();
    const log = deps.logger.child({ target: describe(target), runId, jobId: job.id, attempt: job.attemptsMade + 1 });
    let outcome: TargetOutcome;
    const progress = jobProgressReporter(job);
    try {
      outcome = await syncTarget(deps.db, deps.clientFor(source), target, {
        runId,
        signal,
        recordFailure: lastAttempt,
        acceptRemovals: job.data.acceptRemovals === true,
        logger: log,
        onProgress: progress.onProgress,
      });
      await progress.finish();
    } catch (err) {
      if (signal.aborted) {
        // Stopped by shutdown: nothing was applied (one transaction), so a later attempt starts clean.
        throw new Error(`${describe(target)}: aborted (${String((signal.reason as Error)?.message ?? signal.reason)})`);
      }
      if (!isListFailure(err)) {
        // Postgres: retried by BullMQ. After the last attempt the run cannot complete, so it is
        // closed as failed (best effort: the database may still be away).
        if (lastAttempt) await failRun(deps.db, runId, `database error: ${(err as Error).message}`, source).catch(() => undefined);
        throw err;
      }
      const upstream = err instanceof UpstreamError ? err : undefined;
      const rateLimited = job.data.rateLimited ?? 0;
      if (upstream?.status === 429 && rateLimited < RATE_LIMIT_TIMES) {
        const ms = upstream.retryAfterMs ?? DEFAULT_RATE_LIMIT_MS;
        log.warn({ retryAfterMs: ms }, "rate limited by the service: this source's jobs wait, the others go on");
        await deps.gate.coolDown(source.name, ms);
        await job.updateData({ ...job.data, rateLimited: rateLimited + 1 });
        return later(job, token, ms);
      }
      if (upstream?.retryable && upstream.status !== 429) {
        log.warn({ code: upstream.code, err: upstream.message }, 'list failed; will retry');
        throw err;
      }
      // Credentials, TLS, a 4xx, a broken answer: retrying cannot heal it. Record it now and fail
      // at once, except a 404, which records the list as unavailable here: an answer, not an error.
      const unavailable = isUnavailable(err);
      const snapshotId = await recordFailure(deps.db, target, runId, err, performance.now() - started);
      deps.metrics?.target({
        source: source.name,
        list: target.list.key,
        variant: target.variant,
        status: unavailable ? 'unavailable' : 'failed',
        durationMs: performance.now() - started,
        counts: {},
        errorCode: err.code,
      });
      await refreshRun(deps.db, runId, source);
      if (unavailable) return { kind: 'target', runId, status: 'unavailable', snapshotId };
      log.warn({ code: err.code, err: err.message, snapshotId }, 'list failed; not retried');
      throw new UnrecoverableError(`${err.code}: ${err.message}`);
    }
    observe(outcome);
    await refreshRun(deps.db, runId, source);
    // The last attempt recorded the failure; the job fails too, so it shows in the dashboard.
    if (outcome.status === 'failed') throw new UnrecoverableError(`${outcome.errorCode ?? 'failed'}: ${outcome.error ?? ''}`);
    const result: JobResult = { kind: 'target', runId, status: outcome.status, counts: outcome.counts };
    if (outcome.snapshotId !== undefined) result.snapshotId = outcome.snapshotId;
    return result;
  }

  return async function process(job: Job<SyncJobData>, token?: string, signal?: AbortSignal): Promise<JobResult> {
    const data = job.data;
    if (data.kind === 'run') return processRun(job as Job<RunJobData>);
    if (data.kind === 'target') return processTarget(job as Job<TargetJobData>, token, signal ?? new AbortController().signal);
    throw new UnrecoverableError(`unknown job kind '${(data as { kind?: string }).kind}'`);
  };
}
