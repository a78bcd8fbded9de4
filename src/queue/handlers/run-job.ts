import type { Span } from '@opentelemetry/api';
import type { Job } from 'bullmq';
import { targetsFor } from '../../catalog/catalog.ts';
import { refreshRun, startRun } from '../../sync/run/runs.ts';
import { inSpan, traceCarrier } from '../../tracing/spans.ts';
import { nothingInRunJob, syncSmallTargets, type InlineResult } from './inline-targets.ts';
import { jobOptions, type RunJobData, type TargetJobData } from '../jobs.ts';
import { scheduleSlot, targetJobId } from '../redis/names.ts';
import { sourceFor, type JobResult, type ProcessorDeps } from './processor-deps.ts';
import { runStatus } from '../../sync/sql.ts';

/** BullMQ's highest priority number (the lowest priority). */
const MAX_PRIORITY = 2_097_151;

/** The slot of a run job: the trigger's, or the instant a scheduler planned the job (its id ends with it). */
export function slotOf(job: Pick<Job<RunJobData>, 'id' | 'data' | 'opts' | 'timestamp'>): string {
  if (job.data.slot) return job.data.slot;
  const planned = /:(\d+)$/.exec(job.id ?? '')?.[1] ?? (job.opts as { prevMillis?: number }).prevMillis;
  return scheduleSlot(Number(planned ?? job.timestamp));
}

/**
 * A run job: opens the source's run for its slot, syncs the lists known to be small itself
 * (inline-targets.ts), and fans out one target job per list and variant left, in the run's span
 * (continuing the trigger's trace, if any), whose context each target job carries.
 */
export function processRunJob(deps: ProcessorDeps, job: Job<RunJobData>, signal: AbortSignal): Promise<JobResult> {
  return inSpan('refsync.run', { parent: job.data.trace, attributes: { 'refsync.source': job.data.source } }, (span) => fanOut(deps, job, span, signal));
}

async function fanOut(deps: ProcessorDeps, job: Job<RunJobData>, span: Span, signal: AbortSignal): Promise<JobResult> {
  const source = sourceFor(deps, job.data.source);
  const slot = slotOf(job);
  const targets = targetsFor(source, job.data.lists);
  const run = await startRun(deps.db, { source, trigger: job.data.trigger, targetsTotal: targets.length, slot });
  span.setAttribute('refsync.run_id', run.id);
  // What the job's result and its log line say of the run; inRunJob: the lists it settled itself.
  const countsOf = (inline: InlineResult) => ({
    runId: run.id,
    slot,
    targets: targets.length,
    inRunJob: inline.settled,
    unchangedAsServed: inline.unchangedAsServed,
  });
  const result = (fannedOut: boolean, inline = nothingInRunJob([])): JobResult => ({ kind: 'run', fannedOut, ...countsOf(inline) });
  if (!run.created) {
    // A second job for the same slot (two triggers, or this job retried after a crash): fan out
    // again only while the run is open; the target jobs' ids and snapshot check keep it at once.
    const { rows } = await deps.db.query<{ status: string }>(runStatus, [run.id]);
    if (rows[0]?.status !== 'running') return result(false);
  }
  if (targets.length === 0) {
    // Nothing to fan out: refreshRun closes a run of 0 of 0 targets as succeeded.
    await refreshRun(deps.db, run.id, source);
    return result(false);
  }
  // A second fan-out queues every target again (the jobs check the run first): what the first one
  // synced itself before it stopped is known only to the run.
  const inline = run.created ? await syncSmallTargets(deps, job, run.id, targets, signal) : nothingInRunJob(targets);
  if (inline.left.length === 0) {
    deps.logger.info({ source: source.name, ...countsOf(inline), trigger: job.data.trigger }, 'run synced in its job');
    return result(false, inline);
  }
  const opts = jobOptions(deps.policy);
  const trace = traceCarrier();
  await deps.queue.addBulk(
    inline.left.map((t) => {
      const i = targets.indexOf(t);
      const data: TargetJobData = { kind: 'target', source: source.name, list: t.list.key, variant: t.variant, runId: run.id, slot };
      // The n-th target of every source goes before the (n+1)-th of any: the slots take the
      // sources in turn rather than one source's lists all at once (lower runs first in BullMQ).
      const priority = Math.min(i + 1, MAX_PRIORITY);
      if (job.data.acceptRemovals) data.acceptRemovals = true;
      if (trace) data.trace = trace;
      if (job.data.acceptSchema) data.acceptSchema = true;
      if (!run.created || inline.tried.has(t)) data.checkDone = true;
      return { name: 'target', data, opts: { ...opts, priority, jobId: targetJobId(source.name, t.list.key, t.variant, slot) } };
    }),
  );
  deps.logger.info({ source: source.name, ...countsOf(inline), targetJobs: inline.left.length, trigger: job.data.trigger }, 'run fanned out');
  return result(true, inline);
}
