// The two kinds of job. A `run` job (made by a source's scheduler, or by `refsync trigger`) opens
// the run record, syncs the lists known to be small itself and fans out one `target` job per list
// variant left; a `target` job syncs one target.
// Both carry names only (source, list, variant): the worker resolves them against its own
// configuration, so no credential ever lands in Redis.
import type { JobsOptions, Queue } from 'bullmq';
import { isDeepStrictEqual } from 'node:util';
import type { ListKey } from '../catalog/list-keys.ts';
import type { SourceConfig } from '../config/types.ts';
import type { TraceCarrier } from '../tracing/spans.ts';
import { manualSlot, runJobId, scheduledJobId, schedulerId, sourceOfScheduler, isValidSlot } from './redis/names.ts';

export interface RunJobData {
  kind: 'run';
  source: string;
  trigger: 'schedule' | 'manual';
  /** Absent for scheduled jobs: their slot is the instant the scheduler planned them. */
  slot?: string;
  /** Only these lists (manual triggers); all configured lists when absent. */
  lists?: ListKey[];
  /** Apply fetches that would retire too much (`trigger --accept-removals`): accepts held lists. */
  acceptRemovals?: boolean;
  /** The trace `refsync trigger` started (tracing on): the run's span continues it. */
  trace?: TraceCarrier;
  /** Apply a held change of the lists' columns once (`trigger --list KEY --accept-schema`). */
  acceptSchema?: boolean;
}

export interface TargetJobData {
  kind: 'target';
  source: string;
  list: ListKey;
  variant: string;
  runId: number;
  slot: string;
  /** Times a 429 put this job back (it fails as rate limited after 10). */
  rateLimited?: number;
  acceptRemovals?: boolean;
  /** The run span's trace context (tracing on): the target's span goes under it, in whichever worker. */
  trace?: TraceCarrier;
  acceptSchema?: boolean;
  /**
   * Queued by a second fan-out of its run (a run job retried, or a second trigger of the slot): the
   * run may hold a snapshot of the target already, from a job of the first fan-out since trimmed.
   */
  checkDone?: boolean;
}

export type SyncJobData = RunJobData | TargetJobData;

/** Retry and retention defaults; tests shorten the backoff. */
export interface JobPolicy {
  /** Attempts of a target job in all (default 5). */
  attempts: number;
  /** First retry delay, doubled on each retry (default 30 s). */
  backoffMs: number;
}

export const defaultJobPolicy: JobPolicy = { attempts: 5, backoffMs: 30_000 };

/**
 * Finished jobs are trimmed so Redis stays small; the run history lives in Postgres. Failed jobs
 * are kept longer, for the dashboard.
 */
export function jobOptions(policy: JobPolicy): JobsOptions {
  return {
    attempts: policy.attempts,
    backoff: { type: 'exponential', delay: policy.backoffMs },
    removeOnComplete: { count: 1_000, age: 24 * 3600 },
    removeOnFail: { count: 5_000, age: 14 * 24 * 3600 },
  };
}

/** A source's scheduler as refsync installs it: its schedule, and the run job it makes. */
type SchedulerRepeat = { pattern: string; tz: string };
type SchedulerTemplate = { name: 'run'; data: RunJobData; opts: JobsOptions };

export interface SchedulerChange {
  upserted: string[];
  /** Already as configured, with their next job planned: left alone. */
  kept: string[];
  removed: string[];
}

/** A scheduler as BullMQ lists it (Queue#getJobSchedulers). */
type StoredScheduler = Awaited<ReturnType<Queue['getJobSchedulers']>>[number];

/**
 * Whether the stored scheduler is the one wanted and its next job waits in the future. Upserting
 * it again would be needless, and at a slot's boundary unsafe: BullMQ (6.7) re-adds the job of a
 * slot still being processed when the upsert read its clock just before that slot and ran just
 * after the job was taken, and the slot then runs twice at once (two workers starting together, or
 * a restart, at a scheduled instant).
 */
async function schedulerAsWanted(
  queue: Queue,
  id: string,
  stored: StoredScheduler | undefined,
  repeat: SchedulerRepeat,
  template: SchedulerTemplate,
): Promise<boolean> {
  if (!stored || stored.pattern !== repeat.pattern || (stored.tz ?? undefined) !== repeat.tz || stored.name !== template.name) return false;
  if (!isDeepStrictEqual(stored.template?.data, template.data) || !isDeepStrictEqual(stored.template?.opts, template.opts)) return false;
  // A next job overdue (no worker promoted it) or gone is replaced by the upsert, as before.
  if (stored.next === undefined || stored.next <= Date.now()) return false;
  return (await queue.getJobState(scheduledJobId(id, stored.next))) === 'delayed';
}

/**
 * Makes the queue's schedulers match the configuration: exactly one per source (an upsert under a
 * stable id, so restarts and concurrent workers converge on the same one, skipped when the stored
 * one is already as configured), and none for a source that is gone. Schedulers not created by
 * refsync are left alone.
 */
export async function reconcileSchedulers(queue: Queue, sources: SourceConfig[], policy: JobPolicy): Promise<SchedulerChange> {
  const wanted = new Set(sources.map((s) => schedulerId(s)));
  const change: SchedulerChange = { upserted: [], kept: [], removed: [] };
  // Read once: compared with the sources' wanted schedulers, and searched for the ones gone (which
  // the upserts below neither add nor touch).
  const existing = new Map((await queue.getJobSchedulers(0, -1, true)).map((scheduler) => [scheduler.id ?? scheduler.key, scheduler]));
  for (const source of sources) {
    const id = schedulerId(source);
    // What the upsert would send is what the stored scheduler is compared with.
    const repeat: SchedulerRepeat = { pattern: source.schedule, tz: source.timezone };
    const template: SchedulerTemplate = { name: 'run', data: { kind: 'run', source: source.name, trigger: 'schedule' }, opts: jobOptions(policy) };
    if (await schedulerAsWanted(queue, id, existing.get(id), repeat, template)) {
      change.kept.push(id);
      continue;
    }
    await queue.upsertJobScheduler(id, repeat, template);
    change.upserted.push(id);
  }
  for (const id of existing.keys()) {
    if (sourceOfScheduler(id) !== undefined && !wanted.has(id)) {
      await queue.removeJobScheduler(id);
      change.removed.push(id);
    }
  }
  return change;
}

export interface EnqueuedRun {
  source: string;
  slot: string;
  jobId: string;
  /** False when a job for this source and slot already existed (BullMQ dedupes by job id). */
  added: boolean;
}

/** Enqueues a manual run of each source for the slot (a fresh one when not given). */
export async function enqueueManualRuns(
  queue: Queue,
  sources: SourceConfig[],
  options: { slot?: string; lists?: ListKey[]; acceptRemovals?: boolean; acceptSchema?: boolean; policy?: JobPolicy; trace?: TraceCarrier } = {},
): Promise<EnqueuedRun[]> {
  const slot = options.slot ?? manualSlot();
  if (!isValidSlot(slot)) throw new Error(`slot '${slot.slice(0, 40)}' may hold only letters, digits, _ . - (at most 100)`);
  const runs: EnqueuedRun[] = [];
  for (const source of sources) {
    const data: RunJobData = { kind: 'run', source: source.name, trigger: 'manual', slot };
    if (options.lists) data.lists = options.lists;
    if (options.acceptRemovals) data.acceptRemovals = true;
    if (options.trace) data.trace = options.trace;
    if (options.acceptSchema) data.acceptSchema = true;
    const jobId = runJobId(source.name, slot);
    const before = await queue.getJob(jobId);
    const job = await queue.add('run', data, { ...jobOptions(options.policy ?? defaultJobPolicy), jobId });
    runs.push({ source: source.name, slot, jobId: job.id ?? jobId, added: !before });
  }
  return runs;
}
