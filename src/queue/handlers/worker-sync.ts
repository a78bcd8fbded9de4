// A target's sync in a worker, as both ways of running one share it: a target job (target-job.ts)
// and a run job that syncs its source's small lists itself (inline-targets.ts). The list's share of
// the memory budget is taken around the sync, and its outcome settled in one place.
import type { Target } from '../../catalog/catalog.ts';
import { TargetMemory } from '../../memory/target-memory.ts';
import type { ListMemory } from '../../memory/list-memory.ts';
import { recordOutcomeFailure, eachFailureLog, outcomeError } from '../../sync/outcome/target-outcome.ts';
import { refreshRun } from '../../sync/run/runs.ts';
import type { ApplyBatch } from '../../sync/batch/apply-batch.ts';
import { syncTarget, type TargetOutcome, tuningWith } from '../../sync/sync-target.ts';
import type { PageProgress } from '../../upstream/client.ts';
import type { Logger } from '../../util/logger.ts';
import type { ProcessorDeps } from './processor-deps.ts';

export interface WorkerSyncRequest {
  runId: number;
  signal: AbortSignal;
  acceptRemovals: boolean;
  acceptSchema: boolean;
  log: Logger;
  onProgress?: (progress: PageProgress) => void;
  /**
   * Count the run's progress with an unchanged list's snapshot, in its one statement, whose commit
   * then waits for the WAL flush (a target job: it completes only once its work is durable). A run
   * job syncing lists itself counts them once, after the last (syncSmallTargets).
   */
  advanceRun: boolean;
  /**
   * The list's batch: a run job's, where a small unchanged list or first load is taken for the job to
   * write with the others; or a target job's batch of one (ApplyBatch.ofOne), which records an
   * unchanged list at once in its one statement, counting the run's progress with it (advanceRun).
   */
  batch: ApplyBatch;
  /**
   * A run job's list of unknown size: it must stay small. Once its fetch proves it large the sync
   * stops (ProvedLarge, thrown) before anything grows or is written, for a target job to sync it.
   */
  smallOnly?: boolean;
}

/** Thrown out of a run job's sync of a list that proved large (WorkerSyncRequest.smallOnly): a target job's to sync. */
export class ProvedLarge extends Error {
  constructor() {
    super('the list proved large: left to a target job');
    this.name = 'ProvedLarge';
  }
}

/**
 * Syncs the target inside its share of the worker's memory budget and one of its sync slots: a list
 * large at its last sync waits for its share before the fetch; a list that proves large asks during
 * it. It never waits for memory holding a slot: a list holding memory may be waiting for a slot.
 * Throws what syncTarget throws (the database away, the signal aborted); a list's own failure is in
 * the outcome.
 */
export async function syncInWorker(deps: ProcessorDeps, target: Target, request: WorkerSyncRequest): Promise<TargetOutcome> {
  const memory = new TargetMemory(deps.memory, target);
  let entries: number | undefined;
  let release: (() => void) | undefined;
  const inSlot: ListMemory = {
    get admitted() {
      return memory.admitted;
    },
    admitNow: () => !request.smallOnly && memory.admitNow(),
    async wait(signal) {
      if (request.smallOnly) throw new ProvedLarge();
      release?.();
      release = undefined;
      await memory.wait(signal);
      release = await deps.syncSlots.take();
    },
  };
  try {
    await memory.beforeFetch(tuningWith(deps.tuning), request.signal);
    release = await deps.syncSlots.take();
    const outcome = await syncTarget(deps.db, deps.clientFor(target.source), target, {
      runId: request.runId,
      signal: request.signal,
      acceptRemovals: request.acceptRemovals,
      acceptSchema: request.acceptSchema,
      logger: request.log,
      ...(request.onProgress ? { onProgress: request.onProgress } : {}),
      memory: inSlot,
      advanceRun: request.advanceRun,
      batch: request.batch,
      ...(deps.tuning ? { tuning: deps.tuning } : {}),
    });
    if (outcome.status === 'changed' || outcome.status === 'unchanged') entries = outcome.entryCount;
    request.log.debug(
      { status: outcome.status, entries: outcome.entryCount, ...(outcome.status === 'unchanged' && outcome.asServedBefore ? { asServedBefore: true } : {}) },
      'target synced',
    );
    return outcome;
  } finally {
    release?.();
    memory.finish(entries);
  }
}

/**
 * Settles an outcome that is not to be retried, once: its failure recorded, the metrics observed,
 * and, with `refresh`, the run brought up to date (an unchanged list's one statement counted the
 * run already, unless it was the run's last target).
 */
export async function settleOutcome(deps: ProcessorDeps, outcome: TargetOutcome, runId: number, log: Logger, refresh: boolean): Promise<TargetOutcome> {
  const settled = await recordOutcomeFailure(deps.db, outcome, runId, eachFailureLog(log, deps.repeats));
  observe(deps, settled);
  if (refresh && !settled.runAdvanced) await refreshRun(deps.db, runId, outcome.target.source);
  return settled;
}

/** The target's outcome, told to the metrics once. */
function observe(deps: ProcessorDeps, outcome: TargetOutcome): void {
  const input = {
    source: outcome.target.source.name,
    list: outcome.target.list.key,
    variant: outcome.target.variant,
    status: outcome.status,
    durationMs: outcome.durationMs,
    counts: outcome.counts,
  };
  const errorCode = outcomeError(outcome)?.errorCode;
  deps.metrics?.target(errorCode ? { ...input, errorCode } : input);
}
