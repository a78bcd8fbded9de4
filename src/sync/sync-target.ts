import { performance } from 'node:perf_hooks';
import type { Target } from '../catalog/targets.ts';
import { capabilitiesOf } from '../db/capabilities.ts';
import type { Database } from '../db/database.ts';
import { LazyConnection } from '../db/lazy-connection.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
import { applyList } from './apply.ts';
import type { ChangeKind } from './apply-types.ts';
import { ListCollector, type CollectedList } from './collect.ts';
import { CurrentRowsCheck } from './current-rows-check.ts';
import { StaleIndexError } from './current-index.ts';
import { DirectLoad, DirectLoadConflict } from './direct-load.ts';
import { isListFailure, isUnavailable, listFailureOf, recordFailure } from './failure.ts';
import { StagingTable } from './staging.ts';
import type { PageProgress, PagesRequest } from '../upstream/client.ts';
import { tuningWith, type SyncTuning } from './tuning.ts';

/**
 * What the pipeline needs of the upstream client: the entries of one list in batches, a page each
 * (a large page in several, marked as continuations; see continuesPage).
 */
export interface PageSource {
  pages(request: PagesRequest): AsyncIterable<unknown[]>;
}

/** How far the fetch of one target is, for a terminal's progress line and BullMQ's job progress. */
export interface TargetProgress extends PageProgress {
  target: Target;
}

export interface SyncTargetOptions {
  runId: number | null;
  acceptRemovals?: boolean;
  signal?: AbortSignal;
  /**
   * Record a list failure as a failed snapshot and return it (default). The worker passes false on
   * attempts it will retry, so a transient failure leaves no trace but the retry.
   */
  recordFailure?: boolean;
  /** Which way rows take to the database; the defaults (tuning.ts) for what is not given. */
  tuning?: Partial<SyncTuning>;
  logger?: Logger;
  /** Told after each page is received (before it is processed). */
  onProgress?: (progress: TargetProgress) => void;
}

export type TargetStatus = 'unchanged' | 'changed' | 'held' | 'failed' | 'unavailable';

export interface TargetOutcome {
  target: Target;
  status: TargetStatus;
  snapshotId?: number;
  counts: Record<ChangeKind, number>;
  baseline: boolean;
  entryCount: number;
  pages: number;
  durationMs: number;
  error?: string;
  errorCode?: string;
  /** Why the impact on a usage column could not be computed (the list itself synced). */
  impactError?: string;
  /** The list failure itself, for callers that decide on retries (never carries a secret). */
  failure?: Error & { code: string };
}

/** Failures of a fast path that the plain path (every row staged) does not have. */
const fetchAgain = (err: unknown): err is Error => err instanceof StaleIndexError || err instanceof DirectLoadConflict;

const noCounts = (): Record<ChangeKind, number> => ({ added: 0, removed: 0, modified: 0, reappeared: 0 });

/**
 * Syncs one target: fetch every page, normalise and hash, then apply in one transaction. A failure
 * of the list (service, answer, data) is recorded and returned, leaving the last good data as it
 * was; a database failure is thrown, since nothing could be recorded.
 */
export async function syncTarget(
  db: Database,
  client: PageSource,
  target: Target,
  options: SyncTargetOptions,
): Promise<TargetOutcome> {
  const logger = options.logger ?? silentLogger;
  const tuning = tuningWith(options.tuning);
  const { copy } = capabilitiesOf(db);
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const request: PagesRequest = {
    basePath: target.list.basePath,
    path: target.path,
  };
  if (target.serviceVersion) request.serviceVersion = target.serviceVersion;
  if (options.signal) request.signal = options.signal;
  const { onProgress } = options;
  if (onProgress) request.onPage = (progress) => onProgress({ ...progress, target });

  let collected: CollectedList | undefined;
  try {
    const fetchAndApply = async (indexed: boolean): Promise<TargetOutcome> => {
      // Taken at the first spill or at apply, so a small list holds no connection while it is fetched.
      const conn = new LazyConnection(db);
      let failure: unknown;
      const staging = new StagingTable(conn, { copy, copyMinRows: tuning.copyMinRows });
      let direct: DirectLoad | undefined;
      let firstSpill = true;
      try {
        const current = new CurrentRowsCheck(conn, target, indexed, tuning.indexAfterEntries);
        const collector = new ListCollector(target.list, {
          spillThreshold: tuning.spillThreshold,
          keep: (row) => current.keeps(row),
          spill: async (rows) => {
            if (firstSpill) {
              firstSpill = false;
              // The index (read by now) tells a first load cheaply; begin() checks it again under the lock.
              if (await current.neverLoaded()) direct = await DirectLoad.begin(conn, target, tuning.copyMinRows);
            }
            if (direct) return direct.append(rows);
            return staging.append(await current.unmatched(rows));
          },
        });
        for await (const page of client.pages(request)) {
          await collector.addPage(page);
          current.observe(collector.received);
        }
        collected = await current.finish(collector.finish());
        const applyOptions = {
          runId: options.runId,
          acceptRemovals: options.acceptRemovals ?? false,
          durationMs: elapsed,
          analyzeAfterRows: tuning.analyzeAfterRows,
        };
        const applied = direct
          ? await direct.finish(collected, applyOptions)
          : await applyList(conn, target, collected, staging, applyOptions);
        const outcome: TargetOutcome = {
          target,
          status: applied.status,
          snapshotId: applied.snapshotId,
          counts: applied.counts,
          baseline: applied.baseline,
          entryCount: collected.entryCount,
          pages: collected.pages,
          durationMs: elapsed(),
        };
        if (applied.error) {
          outcome.error = applied.error;
          outcome.errorCode = 'held';
        }
        if (collected.replacedValues > 0) {
          logger.warn(
            {
              target: `${target.list.key}:${target.variant}`,
              snapshotId: applied.snapshotId,
              replacedValues: collected.replacedValues,
              replacedEntries: collected.replacedEntries,
              // The first few keys: enough to find the entries, bounded for a million-entry list.
              entries: collected.replacedKeys,
            },
            'replaced NUL or lone surrogates, which Postgres cannot store, with U+FFFD',
          );
        }
        if (applied.impactError) {
          outcome.impactError = applied.impactError;
          logger.warn({ target: `${target.list.key}:${target.variant}`, err: applied.impactError }, 'impact on the usage columns not computed');
        }
        return outcome;
      } catch (err) {
        // A list failure says nothing about the session; anything else may have left it unfit.
        if (!isListFailure(err) && !fetchAgain(err)) failure = err;
        throw err;
      } finally {
        // Before the connection goes back, and before a failure is recorded under the target's lock.
        await direct?.abort().catch((err: unknown) => {
          failure ??= err;
        });
        await staging.drop().catch(() => undefined);
        await conn.release(failure);
      }
    };
    try {
      // The index and the direct first load both stream with COPY.
      return await fetchAndApply(copy && tuning.currentRowIndex);
    } catch (err) {
      if (!fetchAgain(err)) throw err;
      // Another sync applied this target while this one fetched, or a direct first load met a key
      // twice: fetch again, staging every row.
      logger.info({ target: `${target.list.key}:${target.variant}`, reason: err.message }, 'fetching the list again through staging');
      return await fetchAndApply(false);
    }
  } catch (thrown) {
    const err = listFailureOf(thrown, target.list.key);
    if (!err) throw thrown;
    if (options.recordFailure === false) throw err;
    logger.warn({ target: `${target.list.key}:${target.variant}`, code: err.code, err: err.message }, 'list failed');
    const snapshotId = await recordFailure(db, target, options.runId, err, elapsed());
    return {
      target,
      status: isUnavailable(err) ? 'unavailable' : 'failed',
      snapshotId,
      counts: noCounts(),
      baseline: false,
      entryCount: 0,
      pages: collected?.pages ?? 0,
      durationMs: elapsed(),
      error: err.message,
      errorCode: err.code,
      failure: err,
    };
  }
}
