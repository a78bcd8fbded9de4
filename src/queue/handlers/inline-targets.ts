// A run job syncs its source's small lists itself, and queues a target job only for the rest.
//
// Nearly every hourly sync of a reference list finds it unchanged, and a target job of its own
// then costs more than the sync: BullMQ's scripts to take, report and finish the job and the
// source gate's two, several Redis round trips, against one fetch and one Postgres statement
// (docs/performance.md, P4). So a run job first syncs, in a few lanes, the lists known to be small
// (by their entry count at their last sync, read when the job begins). Only what it can settle in
// one go is settled here: a list synced (changed, unchanged or held) or answered 404. An unchanged
// list is not even recorded on its own: it is set aside and all of them are recorded in one statement
// after the last list (src/sync/batch/apply-batch.ts), and a first load is held and all of them
// applied together in a transaction or so (src/sync/batch/apply-batch.ts): a new source's
// lists are most often small too, and a fleet's first day made a target job, a connection and a
// transaction of each. Anything else stops the run job's lists and goes to a target job, which retries, waits
// or fails exactly as it always has: a list that failed or was rate limited, the database away, a
// worker shutting down. A list never synced (its size unknown) is tried here too, and one that proves
// large on the way is stopped before anything of it grows or is written and left to a target job,
// without stopping the others; a list large at its last sync goes to a target job from the start, so
// large lists still spread over every worker and ask the memory budget before their fetch.
import type { Job } from 'bullmq';
import { targetName, type Target } from '../../catalog/catalog.ts';
import { knownLarge } from '../../memory/list-memory.ts';
import { lastOkOf, readLastOk, ApplyBatch, type BatchSettling } from '../../sync/batch/apply-batch.ts';
import { refreshRun } from '../../sync/run/runs.ts';
import type { TargetOutcome } from '../../sync/outcome/target-outcome.ts';
import { tuningWith } from '../../sync/sync-target.ts';
import { inSpan } from '../../tracing/spans.ts';
import { errorLine } from '../../util/error-line.ts';
import { causeOf } from '../../util/failure-cause.ts';
import type { Logger } from '../../util/logger.ts';
import type { RunJobData } from '../jobs.ts';
import type { SourceConfig } from '../../config/types.ts';
import type { SourceSlot } from '../admission/source-gate.ts';
import type { ProcessorDeps } from './processor-deps.ts';
import { verdictOn } from './target-verdict.ts';
import { ProvedLarge, settleOutcome, syncInWorker } from './worker-sync.ts';
import { syncInBatches } from '../../sync/run/run-sync.ts';

export interface InlineResult {
  /** Targets settled in the run job. */
  settled: number;
  /** Of those, the ones recorded unchanged by their served digest (nothing normalised). */
  unchangedAsServed: number;
  /** Targets the run job started but could not settle: their target jobs check the run first. */
  tried: Set<Target>;
  /** Targets left for target jobs, in the order given. */
  left: Target[];
}

/** Nothing synced in the run job: every target is left for a target job. */
export function nothingInRunJob(targets: Target[]): InlineResult {
  return { settled: 0, unchangedAsServed: 0, tried: new Set(), left: targets };
}

/** Whether the target's last sync found it small, or it was never synced: it may be synced inside its run job. */
function notKnownLarge(deps: ProcessorDeps, target: Target): boolean {
  return !knownLarge(deps.memory.sizes.entriesOf(target), tuningWith(deps.tuning));
}

/**
 * Syncs the run's small targets in lanes, each holding one of the source's gate slots (so the
 * source's limit of jobs at once counts them); each list takes one of the worker's sync slots.
 * Returns what is left for target jobs. Never throws for a list: whatever goes wrong with one is
 * its target job's to handle.
 */
export async function syncSmallTargets(
  deps: ProcessorDeps,
  job: Job<RunJobData>,
  runId: number,
  targets: Target[],
  signal: AbortSignal,
): Promise<InlineResult> {
  // One read per run job: each list's size at its last sync (other workers synced some of them) and
  // the content hash an unchanged fetch of it has.
  const lastOk = await readLastOk(deps.db, targets[0]!.source.environment);
  for (const target of targets) {
    const last = lastOkOf(lastOk, target);
    if (last) deps.memory.sizes.learn(target, last.entryCount);
  }
  const small = targets.filter((t) => notKnownLarge(deps, t));
  if (small.length === 0) return nothingInRunJob(targets);
  const source = small[0]!.source;
  // Its first loads applied after the last list, in one transaction: a run job's lanes are few, and
  // group commit would apply most lists on their own.
  const batch = new ApplyBatch(lastOk, { db: deps.db, logger: deps.logger.child({ runId }), startOnGather: false });
  // At most one lane fewer than the worker's sync slots: BullMQ, counting a run job as one job, may
  // give the worker others, and a run job whose lanes took every slot kept them waiting for its
  // lists (a slow source's first run kept a calm source's run waiting on the same worker).
  const lanes = await admitLanes(deps, source, `${job.id}:inline`, Math.min(small.length, Math.max(1, deps.syncSlots.size - 1)));
  if (lanes.length === 0) return nothingInRunJob(targets);
  const logs = new Map<Target, Logger>();
  const written: BatchWritten = { settled: 0, asServed: 0, again: [] };
  const synced = await syncInBatches(small, {
    lanes: lanes.length,
    signal,
    sync: (target) => {
      const log = deps.logger.child({ target: targetName(target), runId, jobId: job.id, inRunJob: true });
      logs.set(target, log);
      return syncOneInRunJob(deps, job, runId, target, signal, log, { batch, smallOnly: !lastOkOf(lastOk, target) });
    },
    // Whatever stopped this list (a failure, a 429, the database, a shutdown) would most likely
    // stop the next one too: the rest go to target jobs, which know how to wait.
    stopsAfter: (result) => result === 'queued',
    batchOf: () => batch,
    lanesEnded: async () => {
      await Promise.all(lanes.map((lane) => lane.release().catch(() => undefined)));
    },
    settle: {
      outcomeOf: (result) => (typeof result === 'object' ? result : undefined),
      settling: (_batch, setAside) => batchSettling(deps, runId, logs, written, setAside.length),
    },
  });
  const started = small.filter((_, i) => synced[i] !== undefined);
  const tried = new Set(small.filter((_, i) => synced[i] === 'queued'));
  const large = new Set(small.filter((_, i) => synced[i] === 'large'));
  const settled = synced.filter((result) => result === 'settled').length + written.settled;
  // The unchanged lists whose statement failed, which may have committed before its answer was
  // lost: their target jobs look for a snapshot in the run first (a group of first loads that
  // failed is in `again`: its transaction wrote nothing).
  for (const result of synced) if (typeof result === 'object' && result.setAside && !written.again.includes(result.target)) tried.add(result.target);
  // The lists settled here are counted once, now: with their snapshots committed without waiting
  // for the WAL flush, this count's commit (which waits) makes them durable before the job goes on.
  // When they are all of the run's, none is left in flight and the count closes the run: it goes
  // straight to the close, without the one-statement count of a run still going on (a round trip
  // and a count of the run's snapshots, of a run job's eight in the hourly slot).
  if (settled > 0) await refreshRun(deps.db, runId, source, settled === targets.length);
  const notDone = new Set([...tried, ...written.again, ...large]);
  const done = new Set(started.filter((t) => !notDone.has(t)));
  return { settled, unchangedAsServed: written.asServed, tried, left: targets.filter((t) => !done.has(t)) };
}

/**
 * How a run job's list ended: settled, left to a target job ('queued', 'large'), or taken by the
 * batch (its outcome set aside until the batch is written).
 */
type InlineSync = 'settled' | 'queued' | 'large' | TargetOutcome;

/**
 * What the run job's batch wrote: the lists settled, of them those recorded unchanged by their served
 * digest, and `again`, the lists it did not write (nothing written for them), for target jobs to sync
 * the ordinary way.
 */
interface BatchWritten {
  settled: number;
  asServed: number;
  again: Target[];
}

/**
 * How the run job settles its batch once written (the unchanged lists set aside in one statement, the
 * first loads gathered together): each list it wrote settled here, the rest left to target jobs.
 * Counts into `written`; `setAside`, the lists the batch holds.
 */
function batchSettling(deps: ProcessorDeps, runId: number, logs: ReadonlyMap<Target, Logger>, written: BatchWritten, setAside: number): BatchSettling {
  return {
    db: deps.db,
    runId,
    recorded: async (outcome) => {
      const done = await settleOutcome(deps, outcome, runId, logs.get(outcome.target)!, false);
      written.settled += 1;
      if (outcome.status === 'unchanged' && outcome.asServedBefore) written.asServed += 1;
      return done;
    },
    again: async (outcome) => {
      logs.get(outcome.target)!.info('unchanged list changed or taken by another sync before its record: queued as a target job');
      written.again.push(outcome.target);
      return outcome;
    },
    unrecorded: async (err) => {
      deps.logger.info({ runId, lists: setAside, err: errorLine(err) }, 'unchanged lists not recorded in their run job: queued as target jobs');
    },
  };
}

/**
 * The lanes a run job may sync in: one gate slot each, up to the source's limit of jobs at once
 * (`wanted` for a source without one), none while the source cools down or is busy.
 */
async function admitLanes(deps: ProcessorDeps, source: SourceConfig, id: string, wanted: number): Promise<SourceSlot[]> {
  const limit = source.maxConcurrentJobs;
  const lanes: SourceSlot[] = [];
  for (let i = 0; i < Math.min(limit ?? 1, wanted); i++) {
    const admission = await deps.gate.admit(source.name, `${id}:${i}`, limit);
    if (!admission.admitted) break;
    lanes.push(admission.slot);
  }
  // Without a limit the one admission (the cool-down's check) stands for every lane.
  if (limit === undefined && lanes.length === 1) while (lanes.length < wanted) lanes.push(lanes[0]!);
  return lanes;
}

const QUEUED = 'list not settled in its run job: queued as a target job';

/**
 * Syncs one target in its own span and settles it, or sets it aside (unchanged: recorded with the
 * others after the last list), or says it is for a target job ('queued').
 */
async function syncOneInRunJob(
  deps: ProcessorDeps,
  job: Job<RunJobData>,
  runId: number,
  target: Target,
  signal: AbortSignal,
  log: Logger,
  run: { batch: ApplyBatch; smallOnly: boolean },
): Promise<InlineSync> {
  const attributes = { 'refsync.source': target.source.name, 'refsync.list': target.list.key, 'refsync.variant': target.variant, 'refsync.run_id': runId };
  try {
    return await inSpan('refsync.target', { target: true, attributes }, async (span) => {
      const outcome = await syncInWorker(deps, target, {
        runId,
        signal,
        acceptRemovals: job.data.acceptRemovals === true,
        acceptSchema: job.data.acceptSchema === true,
        log,
        advanceRun: false,
        ...run,
      }).catch((err: unknown) => {
        if (!(err instanceof ProvedLarge)) throw err;
        return undefined;
      });
      if (!outcome) {
        span.setAttribute('refsync.status', 'large');
        log.info('list proved large: queued as a target job');
        return 'large';
      }
      const verdict = verdictOn(outcome, { last: false, rateLimited: 0 });
      if (verdict.kind === 'wait') await deps.gate.coolDown(target.source.name, verdict.ms);
      if (verdict.kind !== 'done' && verdict.kind !== 'record') {
        span.setAttribute('refsync.status', 'queued');
        // Every list of a run job stopped by one cause says so alike: once at a time.
        const { error, errorCode } = verdict.failed;
        const kind = [QUEUED, target.source.name, errorCode, causeOf(error, errorCode)];
        deps.repeats.info(log, kind, { code: errorCode, err: error }, QUEUED);
        return 'queued';
      }
      if (outcome.setAside) {
        span.setAttribute('refsync.status', outcome.status);
        return outcome;
      }
      const settled = await settleOutcome(deps, outcome, runId, log, false);
      span.setAttribute('refsync.status', settled.status);
      return 'settled';
    });
  } catch (err) {
    log.info({ err: errorLine(err) }, QUEUED);
    return 'queued';
  }
}
