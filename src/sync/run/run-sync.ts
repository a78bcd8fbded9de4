import { capabilitiesOf } from '../../db/capabilities.ts';
import type { ListKey } from '../../catalog/list-keys.ts';
import { targetsFor, type Target } from '../../catalog/targets.ts';
import type { SourceConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import { mapWithConcurrency } from '../../util/concurrency.ts';
import { silentLogger, type Logger } from '../../util/logger.ts';
import { recordOutcomeFailure } from '../outcome/record-failure.ts';
import { closeAbandonedRuns, failRun, refreshRun, RunClaim, startRun, type RunStatus, type RunTrigger } from './runs.ts';
import { syncTarget, type PageSource, type TargetOutcome, type TargetProgress } from '../sync-target.ts';
import type { SyncTuning } from '../tuning.ts';
import { readLastOk, recordedOutcome, UnchangedLists } from '../load/unchanged-lists.ts';

export interface RunSyncOptions {
  db: Database;
  sources: SourceConfig[];
  clientFor: (source: SourceConfig) => PageSource;
  trigger: RunTrigger;
  lists?: readonly ListKey[];
  acceptRemovals?: boolean;
  /** Apply held changes of the lists' columns once (`sync --list KEY --accept-schema`). */
  acceptSchema?: boolean;
  /** Targets in flight at once, across all sources (default 4). */
  concurrency?: number;
  logger?: Logger;
  signal?: AbortSignal;
  onTarget?: (outcome: TargetOutcome) => void;
  onProgress?: (progress: TargetProgress) => void;
  /** Which way rows take to the database (tuning.ts); the defaults when absent. */
  tuning?: Partial<SyncTuning>;
}

export interface RunResult {
  runId: number;
  source: SourceConfig;
  status: RunStatus;
  outcomes: TargetOutcome[];
}

/**
 * One sync of every configured target, in process: one run record per source, targets fetched
 * concurrently, each applied in its own transaction. A failing list never stops the others.
 */
export async function runSync(options: RunSyncOptions): Promise<RunResult[]> {
  // One connection holds this process's claim on its runs for as long as they last.
  return options.db.withConnection(async (runConn) => {
    const claim = await RunClaim.open(runConn, capabilitiesOf(options.db));
    const plans = [];
    try {
      for (const source of options.sources) {
        await closeAbandonedRuns(options.db, source);
        const targets = targetsFor(source, options.lists);
        const run = await startRun(options.db, { source, trigger: options.trigger, targetsTotal: targets.length });
        await claim.hold(run.id);
        // Each list's last content hash: an unchanged fetch is set aside and recorded with the others.
        const unchanged = new UnchangedLists(await readLastOk(options.db, source.environment));
        plans.push({ source, runId: run.id, targets, client: options.clientFor(source), unchanged });
      }
      return await syncPlans(options, plans);
    } finally {
      await claim.release().catch(() => undefined);
    }
  });
}

interface Plan {
  source: SourceConfig;
  runId: number;
  targets: Target[];
  client: PageSource;
  /** The source's unchanged lists, set aside during the run and recorded together at its end. */
  unchanged: UnchangedLists;
}

async function syncPlans(options: RunSyncOptions, plans: Plan[]): Promise<RunResult[]> {
  // Taken in turn across sources, so that one slow source's lists do not fill every slot first.
  const rounds = Math.max(0, ...plans.map((plan) => plan.targets.length));
  const work = Array.from({ length: rounds }, (_, i) => plans.flatMap((plan) => (i < plan.targets.length ? [{ plan, target: plan.targets[i]! }] : []))).flat();
  const outcomes = await mapWithConcurrency(work, options.concurrency ?? 4, ({ plan, target }) => syncOne(options, plan, target, plan.unchanged));
  const results: RunResult[] = [];
  for (const plan of plans) {
    const planned = outcomes.filter((_, i) => work[i]!.plan === plan);
    await recordSetAside(options, plan, planned);
    const status = await refreshRun(options.db, plan.runId, plan.source, true);
    results.push({ runId: plan.runId, source: plan.source, status, outcomes: planned });
  }
  return results;
}

/**
 * Syncs one target of the run; with `unchanged`, an unchanged fetch is set aside there, told to
 * onTarget only once recorded. A database failure fails the run.
 */
async function syncOne(options: RunSyncOptions, plan: Plan, target: Target, unchanged?: UnchangedLists): Promise<TargetOutcome> {
  const logger = options.logger ?? silentLogger;
  return failingRun(options, plan, async () => {
    const targetOptions: Parameters<typeof syncTarget>[3] = {
      runId: plan.runId,
      acceptRemovals: options.acceptRemovals ?? false,
      acceptSchema: options.acceptSchema ?? false,
      logger,
    };
    if (options.signal) targetOptions.signal = options.signal;
    if (options.onProgress) targetOptions.onProgress = options.onProgress;
    if (options.tuning) targetOptions.tuning = options.tuning;
    if (unchanged) targetOptions.unchanged = unchanged;
    // In process there is no later attempt: a list failure is recorded at once.
    const outcome = await recordOutcomeFailure(options.db, await syncTarget(options.db, plan.client, target, targetOptions), plan.runId, logger);
    if (!outcome.setAside) options.onTarget?.(outcome);
    return outcome;
  });
}

/** Runs fn; what it throws (the database, not a list: a list's failure is in its outcome) fails the run first. */
async function failingRun<T>(options: RunSyncOptions, plan: Plan, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    await failRun(options.db, plan.runId, `database error: ${(err as Error).message}`, plan.source).catch(() => undefined);
    throw err;
  }
}

/**
 * Records the source's unchanged lists set aside in one statement (unchanged-lists.ts), replacing
 * their outcomes in `outcomes`. One it did not record (another sync holds or changed it meanwhile)
 * is synced again the ordinary way.
 */
async function recordSetAside(options: RunSyncOptions, plan: Plan, outcomes: TargetOutcome[]): Promise<void> {
  if (plan.unchanged.size === 0) return;
  const ids = await failingRun(options, plan, () => plan.unchanged.record(options.db, plan.runId));
  for (const [i, outcome] of outcomes.entries()) {
    if (!outcome.setAside) continue;
    const snapshotId = ids.get(outcome.target) ?? null;
    if (snapshotId === null) {
      outcomes[i] = await syncOne(options, plan, outcome.target);
      continue;
    }
    outcomes[i] = recordedOutcome(outcome, snapshotId);
    options.onTarget?.(outcomes[i]);
  }
}
