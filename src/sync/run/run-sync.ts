// A sync run in process (`refsync sync`, `demo`): one run per source, its lists synced in lanes
// and written in batches. Below it, the one way lists are synced and written, whoever syncs them
// (this run, a worker's run job, a target job), and the lanes they go in.
import { capabilitiesOf, type Connection, type Database, warmConnections } from '../../db/database.ts';
import type { ListKey } from '../../catalog/list-keys.ts';
import { targetsFor, type Target } from '../../catalog/catalog.ts';
import type { SourceConfig } from '../../config/types.ts';
import { silentLogger, type Logger } from '../../util/logger.ts';
import { recordOutcomeFailure, groupedFailureLog, type FailureLog, isFailedOutcome, type TargetOutcome } from '../outcome/target-outcome.ts';
import { closeAbandonedRuns, failRun, refreshRun, RunClaim, startRun, type RunStatus, type RunTrigger } from './runs.ts';
import { syncTarget, type PageSource, type SyncTargetOptions, type TargetProgress, type TargetRun, type SyncTuning } from '../sync-target.ts';
import { readLastOk, ApplyBatch, settleBatch, type BatchSettling } from '../batch/apply-batch.ts';
import { warmFirstLoadSession } from '../sql.ts';
import { DatabaseRefusedError } from '../../db/refused.ts';
import { refusedOutcome } from '../outcome/refused-outcome.ts';

const DEFAULT_CONCURRENCY = 4;

/**
 * The transactions a run's first loads are applied in at once, each on a connection of its own.
 * Two: a connection's new backend costs the database more CPU than the applies it would share (on
 * a slow 2-core machine 30 ms for the backend alone, about 40 with its first catalog reads, where a
 * first sync's applies take about 90 ms in all), and a first sync's small lists are written in two
 * transactions about as soon as in four (docs/performance.md, P1:
 * P1's Postgres CPU 215 ms at four, 135 ms at two, its wall time no longer).
 */
const FIRST_LOAD_APPLIES_AT_ONCE = 2;

function firstLoadsParallel(options: RunSyncOptions): number {
  return Math.min(options.concurrency ?? DEFAULT_CONCURRENCY, FIRST_LOAD_APPLIES_AT_ONCE);
}

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
  /** Which way rows take to the database (src/sync/sync-target.ts#defaultTuning); the defaults when absent. */
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
  const failures = groupedFailureLog(options.logger ?? silentLogger);
  try {
    // One connection holds this process's claim on its runs for as long as they last.
    return await options.db.withConnection(async (runConn) => {
      const { plans, started, claim, signal } = startPlans(options, runConn);
      try {
        return await syncPlans({ ...options, signal, failures }, plans, claim);
      } finally {
        // The starts end before the claim does, whether or not a list got as far as its run.
        await started.catch(() => undefined);
        await claim.then((c) => c.release()).catch(() => undefined);
      }
    });
  } finally {
    failures.flush();
  }
}

/** The options as the run's steps see them: the lists' failures go to the run's one log of them. */
type RunOptions = RunSyncOptions & { failures: FailureLog };

interface Plan {
  source: SourceConfig;
  targets: Target[];
  client: PageSource;
  /** The source's run once every source's has started (startRuns); a start that failed rejects it. */
  run: Promise<StartedRun>;
}

interface StartedRun {
  runId: number;
  /**
   * The source's batch: its unchanged lists set aside during the run and recorded together at its
   * end, its small first loads gathered as they are fetched and applied a few at a time.
   */
  batch: ApplyBatch;
}

/**
 * Each source's plan, its run started on `runConn` but not waited for: a list's fetch needs no run
 * (its apply does, and waits for it), so the fetches begin beside the starts rather than after
 * them, ahead of an unchanged sync's first request. No list is applied until every run has started, as when
 * they all came first; a start that fails stops the fetches (`signal`), and each list then throws its
 * error, neither applied nor recorded.
 */
function startPlans(options: RunSyncOptions, runConn: Connection) {
  // What may throw (the lists, a client) comes before anything is started.
  const sources = options.sources.map((source) => ({ source, targets: targetsFor(source, options.lists), client: options.clientFor(source) }));
  const claim = RunClaim.open(runConn, capabilitiesOf(options.db));
  const started = startRuns(options, claim, sources);
  const stop = new AbortController();
  started.catch(() => stop.abort());
  const plans = sources.map((planned, i): Plan => {
    const run = started.then((runs) => runs[i]!);
    // Awaited by the lists once fetched, maybe after it failed: a rejection left unhandled meanwhile ends the process.
    run.catch(() => undefined);
    return { ...planned, run };
  });
  return { plans, started, claim, signal: options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal };
}

/**
 * Starts each source's run in turn: its abandoned runs closed before its new run row, the claim's
 * lock on it, and each list's last content hash (an unchanged fetch is set aside and recorded with
 * the others).
 */
async function startRuns(
  options: RunSyncOptions,
  claiming: Promise<RunClaim>,
  sources: ReadonlyArray<Pick<Plan, 'source' | 'targets'>>,
): Promise<StartedRun[]> {
  const claim = await claiming;
  const runs: StartedRun[] = [];
  let firstLoadKeys = 0;
  for (const { source, targets } of sources) {
    await closeAbandonedRuns(options.db, source);
    const run = await startRun(options.db, { source, trigger: options.trigger, targetsTotal: targets.length });
    await claim.hold(run.id);
    const lastOk = await readLastOk(options.db, source.environment);
    const firstLoadsApply = { db: options.db, logger: options.logger ?? silentLogger, parallel: firstLoadsParallel(options) };
    const batch = new ApplyBatch(lastOk, firstLoadsApply);
    firstLoadKeys += new Set(batch.expect(targets).map((t) => t.list.key)).size;
    runs.push({ runId: run.id, batch });
  }
  // A list with no ok snapshot yet will be written, whatever it serves: the connections its first
  // load is applied on (one per list key at most, firstLoadsParallel) are opened now, beside the
  // fetches. Lists that may be unchanged open none (most syncs write nothing).
  warmConnections(options.db, Math.min(firstLoadKeys, firstLoadsParallel(options)), warmFirstLoadSession);
  return runs;
}

async function syncPlans(options: RunOptions, plans: Plan[], claim: Promise<RunClaim>): Promise<RunResult[]> {
  // Taken in turn across sources, so that one slow source's lists do not fill every slot first.
  const rounds = Math.max(0, ...plans.map((plan) => plan.targets.length));
  const work = Array.from({ length: rounds }, (_, i) => plans.flatMap((plan) => (i < plan.targets.length ? [plan.targets[i]!] : []))).flat();
  const planOf = new Map(plans.flatMap((plan) => plan.targets.map((target) => [target, plan] as const)));
  const statuses = new Map<Plan, RunStatus>();
  // Every list is started (a failure of the database throws), its failure recorded at once.
  const outcomes = await syncInBatches(work, {
    lanes: options.concurrency ?? DEFAULT_CONCURRENCY,
    sync: (target) => syncOne(options, planOf.get(target)!, target, planOf.get(target)!.run),
    batchOf: async (target) => (await planOf.get(target)!.run.catch(() => undefined))?.batch,
    settle: {
      outcomeOf: (outcome) => outcome,
      settling: async (_batch, [first]) => {
        const plan = planOf.get(first!.target)!;
        return runSettling(options, plan, await plan.run, claim, (status) => statuses.set(plan, status));
      },
    },
  });
  const results: RunResult[] = [];
  for (const plan of plans) {
    const run = await plan.run;
    const planned = outcomes.flatMap((outcome, i) => (outcome && planOf.get(work[i]!) === plan ? [outcome] : []));
    // A source with no list to sync has no outcome for its batch to settle: its run is closed here.
    const status = statuses.get(plan) ?? (await finishRun(options, plan, run, planned, options.db, claim));
    results.push({ runId: run.runId, source: plan.source, status, outcomes: planned });
  }
  return results;
}

/**
 * How a source's run settles its batch's lists: one the batch took is told to onTarget once written,
 * one it did not write is synced again in the run as a batch of one, and a failed unchanged statement
 * fails the run. Then the run is finished (finishRun). When Postgres refuses the pool a connection
 * for the batch, the rest is done on the claim's held connection: the run never stays `running`.
 */
function runSettling(options: RunOptions, plan: Plan, run: StartedRun, claim: Promise<RunClaim>, finished: (status: RunStatus) => void): BatchFinish {
  let db = options.db;
  return {
    db,
    runId: run.runId,
    recorded: async (outcome) => {
      options.onTarget?.(outcome);
      return outcome;
    },
    again: (outcome) => syncOne(options, plan, outcome.target, Promise.resolve({ runId: run.runId })),
    unrecorded: async (err) => {
      if (err instanceof DatabaseRefusedError && db === options.db) return (db = (await claim).database(options.db));
      await failRunFor(options, plan, err);
      throw err;
    },
    settled: async (outcomes) => finished(await finishRun(options, plan, run, outcomes, db, claim)),
  };
}

/**
 * Records the failures the run's lists left to record (those a refused connection kept from being
 * recorded) and closes the run, on `db`. When Postgres refuses the pool a connection for it, the same
 * is done on the claim's held connection: the run never stays `running`.
 */
async function finishRun(
  options: RunOptions,
  plan: Plan,
  run: StartedRun,
  outcomes: TargetOutcome[],
  db: Database,
  claim: Promise<RunClaim>,
): Promise<RunStatus> {
  try {
    return await finishRunOn(db, options, plan, run, outcomes);
  } catch (err) {
    if (!(err instanceof DatabaseRefusedError) || db !== options.db) throw err;
    return finishRunOn((await claim).database(options.db), options, plan, run, outcomes);
  }
}

async function finishRunOn(db: Database, options: RunOptions, plan: Plan, run: StartedRun, outcomes: TargetOutcome[]): Promise<RunStatus> {
  for (const [i, outcome] of outcomes.entries()) {
    if (!isFailedOutcome(outcome) || outcome.snapshotId !== undefined) continue;
    outcomes[i] = await recordOutcomeFailure(db, outcome, run.runId, options.failures);
  }
  return refreshRun(db, run.runId, plan.source, true);
}

/**
 * Syncs one target of the run; with the run's unchanged lists, an unchanged fetch is set aside there,
 * told to onTarget only once recorded. A refused connection fails the list (its failure recorded
 * when the run is settled); any other database failure fails the run.
 */
async function syncOne(options: RunOptions, plan: Plan, target: Target, run: Promise<TargetRun>): Promise<TargetOutcome> {
  try {
    return await syncOneOrThrow(options, plan, target, run);
  } catch (err) {
    if (!(err instanceof DatabaseRefusedError)) throw err;
    const outcome = refusedOutcome(target, err);
    options.onTarget?.(outcome);
    return outcome;
  }
}

async function syncOneOrThrow(options: RunOptions, plan: Plan, target: Target, run: Promise<TargetRun>): Promise<TargetOutcome> {
  const logger = options.logger ?? silentLogger;
  return failingRun(options, plan, async () => {
    const targetOptions: SyncTargetOptions = {
      run,
      acceptRemovals: options.acceptRemovals ?? false,
      acceptSchema: options.acceptSchema ?? false,
      logger,
    };
    if (options.signal) targetOptions.signal = options.signal;
    if (options.onProgress) targetOptions.onProgress = options.onProgress;
    if (options.tuning) targetOptions.tuning = options.tuning;
    const synced = await syncTarget(options.db, plan.client, target, targetOptions);
    // In process there is no later attempt: a list failure is recorded at once, in its run (a run
    // that did not start throws its error here, and the failure is not recorded).
    const outcome = await recordOutcomeFailure(options.db, synced, (await run).runId, options.failures);
    if (!outcome.setAside) options.onTarget?.(outcome);
    return outcome;
  });
}

/**
 * Runs fn; what it throws (the database, not a list: a list's failure is in its outcome) fails the
 * run first. A run that did not start has nothing to fail: its start's error is thrown instead.
 */
async function failingRun<T>(options: RunSyncOptions, plan: Plan, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    await failRunFor(options, plan, err);
    throw err;
  }
}

/** Fails the run for what the database threw, best effort. */
async function failRunFor(options: RunSyncOptions, plan: Plan, err: unknown): Promise<void> {
  // A refused connection fails the list that needed it, not the run: finishRun closes the run.
  if (err instanceof DatabaseRefusedError) return;
  const { runId } = await plan.run;
  await failRun(options.db, runId, `database error: ${(err as Error).message}`, plan.source).catch(() => undefined);
}

// ── Lists synced and written in batches ──
// The one way lists are synced and written, whoever syncs them: `refsync sync` (runSync, above: a
// batch per source), a worker's run job syncing its small lists itself
// (src/queue/handlers/inline-targets.ts: one batch) and a target job
// (src/queue/handlers/target-job.ts: its one list, a batch of one). The lists go in lanes
// (syncTargets, below), each list's batch is told as its sync ends, and each batch is then written and
// its lists settled (src/sync/batch/apply-batch.ts#settleBatch). What differs between them is the policy: how many lanes and
// what stops them, how one list is synced and settled, and what a batch's lists become once it is
// written: one it did not write is synced again in process and left to a target job in a run job,
// and a failed unchanged statement fails the run in process and leaves its lists to target jobs in
// a run job. A target job's own waits and retries (its gate, a 429, the verdict) are in its sync.

/** How a caller syncs its lists: the lanes' policy, each list's batch, and how the batches' lists are settled. */
export interface BatchesPolicy<R> extends Omit<TargetsPolicy<Target, R>, 'ended'> {
  /** The batch the list is in, told when its sync ends; undefined when there is none (its run never started). */
  batchOf(target: Target): ApplyBatch | undefined | Promise<ApplyBatch | undefined>;
  /**
   * Called once no list is in flight, however the lanes ended, before any batch is written: what
   * the lanes held (a run job's gate slots) is given back, not kept through the writes.
   */
  lanesEnded?(): Promise<void>;
  /**
   * How each batch's lists are settled once it is written. Absent when every batch is a batch of one
   * (ApplyBatch.ofOne), whose list is written as it is taken and settled by its sync.
   */
  settle?: BatchesSettling<R>;
}

/** How the lists of each batch are settled once it is written. */
export interface BatchesSettling<R> {
  /**
   * The list's outcome as its sync left it, for its batch: one set aside is written and settled with
   * the batch, the others are as their sync settled them. Undefined for a result with none.
   */
  outcomeOf(result: R): TargetOutcome | undefined;
  /**
   * How the lists of `batch` are settled once it is written: `outcomes`, its lists' outcomes as their
   * syncs left them, in the targets' order. Not asked for a batch none of whose lists has one.
   */
  settling(batch: ApplyBatch, outcomes: readonly TargetOutcome[]): BatchFinish | Promise<BatchFinish>;
}

/** How a batch's lists are settled (src/sync/batch/apply-batch.ts#settleBatch), and what its caller does once they all are. */
export interface BatchFinish extends BatchSettling {
  /**
   * Told the batch's outcomes once each is settled, to replace any of them in place: in process, the
   * failures not recorded yet are recorded and the run is counted.
   */
  settled?(outcomes: TargetOutcome[]): Promise<void>;
}

/**
 * Syncs the targets in lanes, each told to its batch as it ends, then writes each batch in the order
 * its first list came and settles its lists. Each target's result in the targets' order (a list its
 * batch took, its settled outcome), undefined for one never started. What a sync throws stops the
 * lanes and is thrown once the lists in flight have ended (syncTargets, below), before any batch is
 * written.
 */
export function syncInBatches<R>(
  targets: readonly Target[],
  policy: BatchesPolicy<R> & { settle: BatchesSettling<R> },
): Promise<Array<R | TargetOutcome | undefined>>;
/** Batches of one, settled by their syncs: each target's result as its sync returned it. */
export function syncInBatches<R>(targets: readonly Target[], policy: BatchesPolicy<R> & { settle?: undefined }): Promise<Array<R | undefined>>;
export async function syncInBatches<R>(targets: readonly Target[], policy: BatchesPolicy<R>): Promise<Array<R | TargetOutcome | undefined>> {
  let synced: Array<R | undefined>;
  try {
    synced = await syncTargets<Target, R>(targets, {
      ...policy,
      // Taken or not, this list is no longer to come: the batch's last first loads need not wait for it.
      ended: async (target) => (await policy.batchOf(target))?.done(target),
    });
  } finally {
    await policy.lanesEnded?.();
  }
  if (!policy.settle) return synced;
  const settled = await settleEach(targets, synced, policy, policy.settle);
  return synced.map((result, i) => settled.get(i) ?? result);
}

/** Writes each batch and settles its lists: each list's settled outcome, by its index in `targets`. */
async function settleEach<R>(
  targets: readonly Target[],
  synced: ReadonlyArray<R | undefined>,
  policy: BatchesPolicy<R>,
  settle: BatchesSettling<R>,
): Promise<Map<number, TargetOutcome>> {
  const batches = new Map<ApplyBatch, number[]>();
  for (const [i, target] of targets.entries()) {
    const batch = await policy.batchOf(target);
    if (batch) batches.set(batch, [...(batches.get(batch) ?? []), i]);
  }
  const settled = new Map<number, TargetOutcome>();
  for (const [batch, indexes] of batches) {
    const withOutcome = indexes.flatMap((i) => {
      const result = synced[i];
      const outcome = result === undefined ? undefined : settle.outcomeOf(result);
      return outcome ? [{ i, outcome }] : [];
    });
    if (withOutcome.length === 0) continue;
    const outcomes = withOutcome.map(({ outcome }) => outcome);
    const how = await settle.settling(batch, [...outcomes]);
    await settleBatch(batch, outcomes, how);
    await how.settled?.(outcomes);
    for (const [k, { i }] of withOutcome.entries()) settled.set(i, outcomes[k]!);
  }
  return settled;
}

// ── Lanes ──
// The lanes lists are synced in, side by side: a few at a time, in the items' order, until a list
// or the signal stops them. Whoever syncs lists uses them through syncInBatches, which tells
// each list's batch as it ends and writes the batches after the last.

/** How lists are synced in lanes. */
export interface TargetsPolicy<T, R> {
  /** Lists in flight at once. */
  lanes: number;
  /** Syncs one list and settles or reports it as its caller does. What it throws stops the lanes. */
  sync(item: T): Promise<R>;
  /** Told once a list's sync has ended, however it ended: its batch waits for it no longer. */
  ended?(item: T): Promise<void> | void;
  /** Whether a list's result stops the lanes: no list starts after it. */
  stopsAfter?(result: R): boolean;
  /** Stops the lanes too: no list starts once it is aborted. */
  signal?: AbortSignal;
}

/**
 * Syncs the items in lanes: each one's result in the items' order, undefined for one never started.
 * After a throw no further list starts, and it is thrown only once the lists in flight have settled:
 * a caller that closes shared resources (an HTTP pool, a database) on the way out must not cut the
 * others short, which they would then report as failures of their own.
 */
export async function syncTargets<T, R>(items: readonly T[], policy: TargetsPolicy<T, R>): Promise<Array<R | undefined>> {
  const results = Array.from<R | undefined>({ length: items.length });
  let next = 0;
  let stopped = false;
  const lanes = Array.from({ length: Math.max(1, Math.min(policy.lanes, items.length)) }, async () => {
    while (!stopped && !policy.signal?.aborted && next < items.length) {
      const index = next++;
      const item = items[index]!;
      try {
        const result = await policy.sync(item);
        results[index] = result;
        if (policy.stopsAfter?.(result)) stopped = true;
      } catch (err) {
        stopped = true;
        throw err;
      } finally {
        await policy.ended?.(item);
      }
    }
  });
  const settled = await Promise.allSettled(lanes);
  const failure = settled.find((s) => s.status === 'rejected');
  if (failure) throw failure.reason;
  return results;
}
