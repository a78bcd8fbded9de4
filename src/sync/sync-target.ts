// One target's sync: fetch its pages, collect them, and choose once how the list is written, within
// the target's deadline and by the numbers of its tuning. The sections below hold each of those.
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { listVariant, type Target } from '../catalog/catalog.ts';
import { limitsOf } from '../config/source-limits.ts';
import { capabilitiesOf, type Database, LazyConnection, type Connection } from '../db/database.ts';
import type { PageProgress, PagesRequest } from '../upstream/client.ts';
import type { PageSource } from '../upstream/list-batch.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
import { zeroCounts, type ApplyOptions, type ApplyResult, type TargetOutcome } from './outcome/target-outcome.ts';
import { keptEntry, ListCollector, type CollectedList, type NormalizedEntry, SERVED_DIGEST_MAX_CHARS, KeysOutOfOrder } from './collect/collect.ts';
import { analyzeAfterLargeWrite } from './load/entry-statistics.ts';
import { knownLarge, largeListAfter, WaitForMemory, type ListMemory } from '../memory/list-memory.ts';
import { isListFailure, isUnavailable, listFailureOf } from './outcome/failure.ts';
import type { Loader, LoadResult } from './load/loader.ts';
import { ApplyBatch } from './batch/apply-batch.ts';
import { REMOVALS_HELD, ListFailure } from '../util/error-codes.ts';
import { FirstLoadAlone } from './load/first-load-alone.ts';
import { StreamedFirstLoad } from './load/large/streamed-first-load.ts';
import { StreamedResync } from './load/large/streamed-resync.ts';
import { Resync } from './load/resync.ts';
import type { RowWriteRule } from './load/row-write-rule.ts';
import { TargetTransaction } from './target/target-transaction.ts';
import { CurrentRowsCheck } from './load/large/current-rows-check.ts';

export type { TargetOutcome, TargetStatus } from './outcome/target-outcome.ts';
export type { PageSource } from '../upstream/list-batch.ts';

/** How far the fetch of one target is, for a terminal's progress line and BullMQ's job progress. */
export interface TargetProgress extends PageProgress {
  target: Target;
}

/** The run a target is synced in, as its statements need it. */
export interface TargetRun {
  runId: number | null;
  /**
   * The run's batch (a run job's, or a `refsync sync` source's), written after its last list: a small
   * list it takes (unchanged, or a first load) is left unrecorded, and its outcome says setAside.
   * Without one, the list is a batch of one (ApplyBatch.ofOne): its unchanged fetch recorded at once.
   */
  batch?: ApplyBatch;
}

interface TargetSettings {
  acceptRemovals?: boolean;
  /** Apply a change of the list's columns its schema policy would hold (`--accept-schema`). */
  acceptSchema?: boolean;
  signal?: AbortSignal;
  /** Which way rows take to the database; the defaults (defaultTuning, below) for what is not given. */
  tuning?: Partial<SyncTuning>;
  logger?: Logger;
  /** Told after each page is received (before it is processed). */
  onProgress?: (progress: TargetProgress) => void;
  /** The worker's memory budget for this target (list-memory.ts); a list never waits without one. */
  memory?: ListMemory;
  /**
   * Count the run's progress in the statement that records an unchanged fetch (a worker's target
   * job, which refreshes its run after every target); the outcome then says runAdvanced.
   */
  advanceRun?: boolean;
}

/**
 * A target's settings and its run: at hand, or (`run`) still being started. `refsync sync` starts its
 * run beside its first fetches, which need none of it: the fetch awaits the run once it is in, before
 * the apply or the set-aside that write with it, so a run that fails to start has nothing written.
 */
export type SyncTargetOptions = TargetSettings & (TargetRun | { run: Promise<TargetRun> });

/** One sync's fixed inputs, shared by its fetches. */
interface Fetch {
  db: Database;
  client: PageSource;
  target: Target;
  options: SyncTargetOptions;
  tuning: SyncTuning;
  elapsed: () => number;
  /** Its statements refused once the target's deadline has passed. */
  refusal: () => Error | undefined;
  /** Pages read by the latest fetch and the loader it chose, for a failure's outcome. */
  pages: number;
  loader?: Loader;
  fetches: number;
  /** Set once a key came out of order after the hash let go of its kept lines: sort from the start. */
  sortKeys: boolean;
}

/** One fetch, loaded: what it collected, the loader that wrote it, and how that ended. */
interface Fetched {
  collected: CollectedList;
  loader: Loader;
  result: LoadResult;
  /** Set aside by its served digest, nothing normalised (setAsideAsServedBefore). */
  asServedBefore?: boolean;
}

/**
 * Syncs one target: pages → collect (normalise, hash) → a loader chosen once → loader.finish() →
 * the outcome. A failure of the list (service, answer, data, its deadline) is returned in the
 * outcome, unrecorded, for the caller to settle (src/sync/outcome/target-outcome.ts#recordOutcomeFailure); a database failure is thrown.
 */
export async function syncTarget(db: Database, client: PageSource, target: Target, options: SyncTargetOptions): Promise<TargetOutcome> {
  const started = performance.now();
  const deadline = new TargetDeadline(limitsOf(target.source).targetDeadlineS, target, options.signal);
  const f: Fetch = {
    db,
    client,
    target,
    options: { ...options, signal: deadline.signal },
    tuning: tuningWith(options.tuning),
    elapsed: () => performance.now() - started,
    refusal: deadline.refusal,
    pages: 0,
    fetches: 0,
    sortKeys: false,
  };
  try {
    return await syncWithin(f);
  } catch (thrown) {
    // Past the deadline, whatever broke off the work (an aborted read, a refused statement) is the deadline.
    const failure = deadline.expired ? deadline.error : listFailureOf(thrown, target.list.key);
    if (!failure) throw thrown;
    // What a load wrote before the failure was rolled back; told for the record.
    if (f.loader) logLoad(f, f.loader, 'list load rolled back');
    return {
      target,
      status: isUnavailable(failure) ? 'unavailable' : 'failed',
      counts: zeroCounts(),
      baseline: false,
      entryCount: 0,
      pages: f.pages,
      durationMs: f.elapsed(),
      error: failure.message,
      errorCode: failure.code,
      failure,
    };
  } finally {
    deadline.clear();
  }
}

/** The fetch and load, and the plain refetch when a fast path backs out. */
async function syncWithin(f: Fetch): Promise<TargetOutcome> {
  const { copy, ownSessions } = capabilitiesOf(f.db);
  const { options, target } = f;
  let fetched = await fetchStartingOver(f, { indexed: copy && f.tuning.currentRowIndex, streamAtSpill: ownSessions });
  if ('fetchAgain' in fetched.result) {
    // A fast path backed out: another sync applied the target while the index was in use, or a
    // streamed first load met a key twice. Fetch again the plain way, every row staged: neither
    // fast path is taken, so this cannot back out a second time.
    (options.logger ?? silentLogger).info({ target: listVariant(target), reason: fetched.result.fetchAgain }, 'fetching the list again through staging');
    fetched = await fetchStartingOver(f, { indexed: false, streamAtSpill: false });
  }
  const outcome = appliedOutcome(f, fetched);
  if (outcome.status === 'changed' && !outcome.setAside)
    await analyzeAfterLargeWrite(f.db, target, outcome.counts, f.tuning.analyzeAfterRows, options.logger ?? silentLogger);
  return outcome;
}

/**
 * A fetch that has to start over, at most once for each reason:
 * - It proved the list large while the memory budget had no room. It stops before it holds anything
 *   that grows with the list (no index read, no spill, no connection taken), waits for a list in
 *   flight to finish, and starts again: waiting with the body paused could outlast the upstream's
 *   idle timeout, and the entries thrown away are fewer than largeListAfter.
 * - A key came out of order after the content hash had let go of the lines it kept
 *   (tuning.hashKeepEntries): fetched again, every key sorted from the first.
 */
async function fetchStartingOver(f: Fetch, how: { indexed: boolean; streamAtSpill: boolean }): Promise<Fetched> {
  for (;;) {
    try {
      return await fetchAndLoad(f, how);
    } catch (err) {
      if (err instanceof WaitForMemory) await f.options.memory!.wait(f.options.signal);
      else if (err instanceof KeysOutOfOrder && !f.sortKeys) {
        (f.options.logger ?? silentLogger).info({ target: listVariant(f.target), reason: err.message }, 'fetching the list again to sort its keys');
        f.sortKeys = true;
      } else throw err;
    }
  }
}

/** Fetches every page into a collector, which spills into the loader chosen at its first spill, or after the fetch. */
async function fetchAndLoad(f: Fetch, how: { indexed: boolean; streamAtSpill: boolean }): Promise<Fetched> {
  // Taken at the first spill or at the load, so a small list holds no connection while it is fetched.
  const conn = new LazyConnection(f.db, f.refusal);
  const check = new RowsCheck(conn, f.target, how.indexed, f.tuning.indexAfterEntries);
  const setup: LoaderSetup = {
    conn,
    target: f.target,
    check,
    rule: { copy: capabilitiesOf(f.db).copy, copyMinRows: f.tuning.copyMinRows },
    streamAtSpill: how.streamAtSpill,
  };
  let loader: Loader | undefined;
  let sessionFailure: unknown;
  // The connection is the fetch's alone until its first spill or its last page (readIndexIfKnownLarge).
  let fetchingUnspilled = true;
  f.fetches += 1;
  f.loader = undefined;
  try {
    const largeAfter = largeListAfter(f.tuning);
    const collector = collectorFor(f, check, async (rows) => {
      if (!loader) {
        fetchingUnspilled = false;
        loader = f.loader = await loaderAtFirstSpill(setup);
        if (loader.spillEach) collector.spillEach(loader.spillEach);
      }
      await loader.append(rows);
    });
    f.pages = 0;
    const memory = f.options.memory;
    readIndexIfKnownLarge(f, check, () => fetchingUnspilled);
    for await (const batch of f.client.pages(pagesRequest(f.target, f.options))) {
      // Asked before the batch is taken in, so that neither its spill nor the index read comes first.
      if (memory && !memory.admitted && collector.received + batch.entries.length >= largeAfter && !memory.admitNow()) throw new WaitForMemory();
      await collector.addBatch(batch);
      check.observe(collector.received);
      // A fast upstream keeps this loop busy in microtasks: let the event loop in after each batch,
      // so that the index's COPY, other lists' writes and the worker's timers keep pace with it.
      await setImmediate();
    }
    fetchingUnspilled = false;
    return await loadFetched(f, setup, collector, loader);
  } catch (err) {
    // A list failure says nothing about the session; anything else may have left it unfit.
    if (!isListFailure(err) && !(err instanceof WaitForMemory) && !(err instanceof KeysOutOfOrder)) sessionFailure = err;
    throw err;
  } finally {
    fetchingUnspilled = false;
    // Before the connection goes back, and before the caller records a failure under the target's lock.
    await (loader as Loader | undefined)?.abort().catch((err: unknown) => {
      sessionFailure ??= err;
    });
    // An index read still running (the fetch failed before its first spill) has the connection.
    await check.readsEnded();
    await conn.release(sessionFailure);
  }
}

/** The fetch's collector: it keeps the rows the check says may need writing, and spills them through `spill`. */
function collectorFor(f: Fetch, check: RowsCheck, spill: (rows: NormalizedEntry[]) => Promise<void>): ListCollector {
  const { tuning } = f;
  const collector: ListCollector = new ListCollector(f.target.list, {
    spillThreshold: tuning.spillThreshold,
    spillEvery: Math.min(tuning.spillEvery, tuning.spillThreshold),
    keep: (row) => check.kept(row),
    recheck: (rows) => check.recheck(rows),
    // A list is large at spillThreshold entries. Once its index is read, the rows it keeps are only
    // the ones to write: they go to the database as soon as they make one write's worth.
    firstSpillAt: () => (collector.received >= tuning.spillThreshold && check.onlyChangesKept ? tuning.copyMinRows : tuning.spillThreshold),
    hash: f.sortKeys ? { sorted: true } : { keepAtMost: tuning.hashKeepEntries },
    served: { entries: largeListAfter(tuning) - 1, chars: SERVED_DIGEST_MAX_CHARS, keepRaw: mayBeSetAside(f.options) },
    spill,
  });
  return collector;
}

/**
 * Starts the current rows' index read as the fetch begins, for a list known large already: admitted
 * to the worker's memory budget before its fetch, or, where no budget applies, large at the last ok
 * snapshot its run read. Its read (about 0.5 s at a million rows) then overlaps the upstream's
 * answer, where it would start at indexAfterEntries and hold up the first spill, which waits for
 * it. A run read only after the first spill, or after the last page, starts nothing: the loader
 * chosen then may have begun its transaction on the connection the read would take.
 */
function readIndexIfKnownLarge(f: Fetch, check: RowsCheck, fetchingUnspilled: () => boolean): void {
  const memory = f.options.memory;
  if (memory) {
    // Unadmitted, the list asks the budget once its fetch proves it large, before it reads anything.
    if (memory.admitted) check.readIndexNow();
    return;
  }
  void runOf(f.options).then(
    (run) => {
      if (fetchingUnspilled() && knownLarge(run.batch?.lastEntryCount(f.target), f.tuning)) check.readIndexNow();
    },
    () => undefined,
  );
}

/**
 * The fetch once its last page is in: set aside as served before, else finished and loaded by the
 * loader its first spill chose, or by one chosen now.
 */
async function loadFetched(f: Fetch, setup: LoaderSetup, collector: ListCollector, loader: Loader | undefined): Promise<Fetched> {
  const run = await runOf(f.options);
  const applyOptions = applyOptionsOf(f, run.runId);
  const batch = run.batch ?? ApplyBatch.ofOne();
  const asBefore = await setAsideAsServedBefore(setup, batch, collector, applyOptions);
  if (asBefore) {
    f.pages = asBefore.collected.pages;
    return asBefore;
  }
  const collected = await setup.check.finish(await collector.finish());
  f.pages = collected.pages;
  if (loader) return { collected, loader, result: await loader.finish(collected, applyOptions) };
  const loaded = await loadAfterFetch(setup, batch, collected, applyOptions);
  f.loader = loaded.loader;
  return { collected, ...loaded };
}

/**
 * A small list's fetch whose entries were served as its last ok snapshot's (the same served digest):
 * taken by the batch as unchanged with that snapshot's content hash, count and fields, none of its
 * entries normalised or hashed. Undefined otherwise (the fetch is then normalised as ever). The
 * batch takes it as unchanged, never as a first load: it has that snapshot's hash, and a list with a
 * last ok snapshot is no first load; so its summary, which has no rows, never reaches a loader.
 */
async function setAsideAsServedBefore(setup: LoaderSetup, batch: ApplyBatch, collector: ListCollector, options: ApplyOptions): Promise<Fetched | undefined> {
  const before = batch.servedBefore(setup.target, collector.rawDigest());
  if (!before) return undefined;
  const collected = collector.finishAsBefore(before);
  const taken = await batch.take(setup.conn, setup.target, collected, options);
  if (!taken) return undefined;
  return { collected, ...withoutLoad(setup, taken), asServedBefore: true };
}

/**
 * Whether the target's run read its lists' last ok snapshots to set unchanged fetches aside with (a
 * run job's, `refsync sync`'s; not a batch of one): only then is a small list kept raw until its
 * served digest is compared. A run still starting is taken to have: keeping it raw costs a small
 * list next to nothing.
 */
function mayBeSetAside(options: SyncTargetOptions): boolean {
  return 'run' in options || options.batch?.readLastOk === true;
}

/** The target's run, once started (SyncTargetOptions). */
async function runOf(options: SyncTargetOptions): Promise<TargetRun> {
  return 'run' in options ? options.run : options;
}

/** How the fetch is to be applied in run `runId`, from the sync's options and tuning. */
function applyOptionsOf(f: Fetch, runId: number | null): ApplyOptions {
  return {
    runId,
    acceptRemovals: f.options.acceptRemovals ?? false,
    acceptSchema: f.options.acceptSchema ?? false,
    durationMs: f.elapsed,
    analyzeAfterRows: f.tuning.analyzeAfterRows,
    advanceRun: f.options.advanceRun ?? false,
  };
}

function pagesRequest(target: Target, options: SyncTargetOptions): PagesRequest {
  const request: PagesRequest = { basePath: target.list.basePath, path: target.path };
  if (target.serviceVersion) request.serviceVersion = target.serviceVersion;
  if (options.signal) request.signal = options.signal;
  const { onProgress } = options;
  if (onProgress) request.onPage = (progress) => onProgress({ ...progress, target });
  return request;
}

/** The outcome of a fetch that loaded, with the log lines that go with it. */
function appliedOutcome(f: Fetch, fetched: Fetched): TargetOutcome {
  const { target } = f;
  const logger = f.options.logger ?? silentLogger;
  const { collected, loader, result } = fetched;
  // Only the plain path is left after a refetch, and it never backs out.
  if ('fetchAgain' in result) throw new Error(`${listVariant(target)}: ${result.fetchAgain}, on the plain path`);
  const applied: Omit<ApplyResult, 'snapshotId'> & { snapshotId?: number } = 'setAside' in result ? setAsideResult(result, collected) : result.applied;
  logLoad(f, loader, 'list loaded');
  const facts = {
    target,
    counts: applied.counts,
    baseline: applied.baseline,
    entryCount: collected.entryCount,
    pages: collected.pages,
    durationMs: f.elapsed(),
  };
  const outcome: TargetOutcome =
    applied.status === 'held'
      ? { ...facts, status: 'held', error: applied.error ?? 'held', errorCode: applied.errorCode ?? REMOVALS_HELD }
      : applied.status === 'unchanged' && fetched.asServedBefore
        ? { ...facts, status: 'unchanged', asServedBefore: true }
        : { ...facts, status: applied.status };
  if (applied.snapshotId !== undefined) outcome.snapshotId = applied.snapshotId;
  if ('setAside' in result) outcome.setAside = true;
  if (applied.runAdvanced) outcome.runAdvanced = true;
  if (collected.replacedValues > 0) {
    const replaced = { replacedValues: collected.replacedValues, replacedEntries: collected.replacedEntries, entries: collected.replacedKeys };
    // entries: the first few keys, enough to find them, bounded for a million-entry list.
    logger.warn(
      { target: listVariant(target), snapshotId: applied.snapshotId, ...replaced },
      'replaced NUL or lone surrogates, which Postgres cannot store, with U+FFFD',
    );
  }
  if (applied.impactError) {
    outcome.impactError = applied.impactError;
    logger.warn({ target: listVariant(target), err: applied.impactError }, 'impact on the usage columns not computed');
  }
  return outcome;
}

/**
 * Which way the list took to the database, the rows that way wrote and the fetches it took: for an
 * operator or maintainer reading a debug log (CHANGELOG), and for the benchmarks, which report the
 * rows a fast path spared (bench/sync-child.ts). Tests read the stored rows instead.
 */
function logLoad(f: Fetch, loader: Loader, message: string): void {
  (f.options.logger ?? silentLogger).debug(
    { target: listVariant(f.target), loader: loader.kind, rowsWritten: loader.rowsWritten, fetches: f.fetches },
    message,
  );
}

/** What a fetch set aside will be once its run records it: unchanged, or a first load's baseline. */
function setAsideResult(result: { firstLoad?: true }, collected: CollectedList): Omit<ApplyResult, 'snapshotId'> {
  if (!result.firstLoad) return { status: 'unchanged', counts: zeroCounts(), baseline: false };
  return { status: 'changed', counts: { ...zeroCounts(), added: collected.entryCount }, baseline: true };
}

// ── The target's deadline ──

/** A target past REFSYNC_TARGET_DEADLINE_S: a failure of its list, recorded, never retried (it would take as long). */
export class TargetDeadlineError extends ListFailure {
  readonly code = 'deadline';
}

/**
 * The deadline of one target, all its pages and its write (REFSYNC_TARGET_DEADLINE_S). When it
 * passes, its signal aborts the fetch (the request in flight included) and `refusal` makes the
 * target's connection refuse every further statement but a rollback, so the write stops at its
 * next statement and nothing is committed. The caller's own signal (a shutdown) still aborts too.
 */
export class TargetDeadline {
  readonly signal: AbortSignal;
  readonly #timer: NodeJS.Timeout;
  readonly #seconds: number;
  readonly #target: Target;
  #error: TargetDeadlineError | undefined;
  #expired = false;

  constructor(seconds: number, target: Target, outer?: AbortSignal) {
    this.#seconds = seconds;
    this.#target = target;
    const controller = new AbortController();
    this.#timer = setTimeout(() => {
      this.#expired = true;
      controller.abort(this.error);
    }, seconds * 1000);
    this.#timer.unref();
    this.signal = outer ? AbortSignal.any([outer, controller.signal]) : controller.signal;
  }

  /** Made when first asked for: an Error takes its stack when made, and nearly every target ends well before. */
  get error(): TargetDeadlineError {
    this.#error ??= new TargetDeadlineError(
      `${listVariant(this.#target)}: not synced within the target deadline of ${this.#seconds} s (REFSYNC_TARGET_DEADLINE_S: all its pages and its write); stopped, nothing written`,
    );
    return this.#error;
  }

  get expired(): boolean {
    return this.#expired;
  }

  /** The error a statement of the target's write gets once the deadline has passed; undefined before. */
  readonly refusal = (): Error | undefined => (this.#expired ? this.error : undefined);

  clear(): void {
    clearTimeout(this.#timer);
  }
}

// ── Tuning ──

/**
 * The numbers that decide which way a fetched list takes to the database. They depend on each
 * other (the index must be read before the first spill, a spill must be large enough for COPY), so
 * they live together; docs/performance.md has the measurements behind each default.
 */
export interface SyncTuning {
  /** Rows held in memory before they stream to the database (staging table, or a direct first load). */
  spillThreshold: number;
  /**
   * Rows per spill once a list streams (after its first spill). Smaller than spillThreshold: each
   * row held until its spill outlives V8's young generation, and the old one is let grow to about
   * four times what is live before it is collected; at a million entries, 5,000 rather than 20,000
   * took ~50 MiB off a first load's peak RSS for ~7% more CPU (docs/performance.md, P3 and P6).
   */
  spillEvery: number;
  /**
   * Entries received before the current rows' index is read, so that it is ready by the first spill
   * without holding up the fetch. Keep it well below spillThreshold.
   */
  indexAfterEntries: number;
  /**
   * Whether a large resync checks fetched rows against an index of the current rows and stages only
   * the ones that differ (needs COPY). Without it a resync stages every row.
   */
  currentRowIndex: boolean;
  /**
   * Batches of at least this many rows are written with COPY; below it one unnest statement is as
   * quick. Also one write's worth: a large list whose index has been read spills its changed rows
   * from this many on.
   */
  copyMinRows: number;
  /**
   * Staged rows above which the staging and diff tables are ANALYZEd before the diff is planned; and
   * rows a sync changed from which refdata.entries is analyzed after its commit, when they are also a
   * tenth of the table (entry-statistics.ts).
   */
  analyzeAfterRows: number;
  /**
   * Entries in key order after which the content hash lets go of the lines it kept in case a key
   * comes out of order (about 50 bytes an entry). A list out of order past it is fetched again.
   */
  hashKeepEntries: number;
}

export const defaultTuning: Readonly<SyncTuning> = Object.freeze({
  spillThreshold: 20_000,
  spillEvery: 5_000,
  indexAfterEntries: 5_000,
  currentRowIndex: true,
  copyMinRows: 1_000,
  analyzeAfterRows: 10_000,
  hashKeepEntries: 100_000,
});

/** The defaults with the given settings over them. */
export function tuningWith(overrides: Partial<SyncTuning> = {}): SyncTuning {
  return { ...defaultTuning, ...overrides };
}

// ── Choosing how a list is written ──

/** What choosing a loader needs: the fetch's connection and index check, and how rows are written. */
export interface LoaderSetup {
  conn: LazyConnection;
  target: Target;
  check: RowsCheck;
  rule: RowWriteRule;
  /**
   * Whether a load may hold a transaction from its first spill to its end (a first load, or a
   * resync streamed with its index): only where each connection is a session of its own (on PGlite
   * every other statement would run inside it), and not when the list is fetched again after a
   * streamed load backed out.
   */
  streamAtSpill: boolean;
}

/*
 * A loader is chosen once per fetch, by whichever of these two comes first: the first spill of a
 * large list, or the end of a fetch that never spilled. Both ask the target's state under its lock
 * (target-state.ts#isFirstLoad is the only rule).
 */

/** At the first spill, while the fetch goes on. */
export async function loaderAtFirstSpill(setup: LoaderSetup): Promise<Loader> {
  // An index read in flight uses the same connection: let it end before a transaction begins there.
  await setup.check.readsEnded();
  if (setup.streamAtSpill) {
    const txn = await TargetTransaction.tryBegin(setup.conn, setup.target);
    if (txn?.state.firstLoad) {
      setup.check.off();
      return StreamedFirstLoad.open(txn, setup.rule);
    }
    const index = setup.check.current;
    const streamed = txn && index && (await StreamedResync.open(txn, index));
    if (streamed) return streamed;
    // Another sync holds the target right now, or the index is missing or stale: stage, and diff once it is free.
    await txn?.rollback();
  }
  return new Resync(setup.conn, setup.target, setup.check, setup.rule);
}

/**
 * A fetch that needed no load (taken by its batch: set aside, or recorded unchanged in one statement) and its result;
 * the loader, which writes nothing, is the one an apply would have had, for the load's log line to name.
 */
export function withoutLoad(setup: LoaderSetup, result: LoadResult): { loader: Loader; result: LoadResult } {
  return { loader: new Resync(setup.conn, setup.target, setup.check, setup.rule), result };
}

/** What names the loader of a first load gathered for its run: it writes nothing itself. */
function gatheredFirstLoad(collected: CollectedList): Loader {
  return {
    kind: 'first-load',
    rowsWritten: collected.entryCount,
    append: async () => undefined,
    finish: async () => ({ setAside: true, firstLoad: true }),
    abort: async () => undefined,
  };
}

/**
 * After a fetch that never spilled: its batch (apply-batch.ts; a run's, or the batch of one of a list
 * synced on its own) takes it, set aside as unchanged, gathered as a first load, or recorded unchanged at
 * once; any other is loaded by the loader chosen under the lock in the transaction that then loads.
 * Should another sync have made a list the batch did not take unchanged since, the transaction's
 * apply records it so.
 */
export async function loadAfterFetch(
  setup: LoaderSetup,
  batch: ApplyBatch,
  collected: CollectedList,
  options: ApplyOptions,
): Promise<{ loader: Loader; result: LoadResult }> {
  const taken = await batch.take(setup.conn, setup.target, collected, options);
  if (taken && 'firstLoad' in taken) return { loader: gatheredFirstLoad(collected), result: taken };
  if (taken) return withoutLoad(setup, taken);
  return setup.conn.transaction(async (tx, opened, atCommit) => {
    const txn = await TargetTransaction.within(tx, setup.target, opened, atCommit);
    const loader = txn.state.firstLoad ? new FirstLoadAlone(txn, setup.rule) : new Resync(setup.conn, setup.target, setup.check, setup.rule, txn);
    return { loader, result: await loader.finish(collected, options) };
  }, TargetTransaction.opening(setup.target));
}

// ── Which fetched rows are checked against the current ones ──

/**
 * Which fetched rows a load still has to write. A small list is written whole, so until the list
 * proves large (tuning.indexAfterEntries received, or its first spill) nothing of the large-list
 * path exists; then, where an index may be used (tuning.currentRowIndex, COPY), the check against
 * the current rows is made (large/current-rows-check.ts) and answers from then on.
 */
export class RowsCheck {
  readonly #conn: Connection;
  readonly #target: Target;
  #enabled: boolean;
  readonly #indexAfterEntries: number;
  #current: CurrentRowsCheck | undefined;

  constructor(conn: Connection, target: Target, enabled: boolean, indexAfterEntries: number) {
    this.#conn = conn;
    this.#target = target;
    this.#enabled = enabled;
    this.#indexAfterEntries = indexAfterEntries;
  }

  /** The check against the current rows, once the list proved large and may use one. */
  get current(): CurrentRowsCheck | undefined {
    return this.#current;
  }

  #large(): CurrentRowsCheck | undefined {
    if (this.#enabled) this.#current ??= new CurrentRowsCheck(this.#conn, this.#target);
    return this.#current;
  }

  /** Called with the entries read so far: the list proves large at indexAfterEntries. */
  observe(received: number): void {
    if (received >= this.#indexAfterEntries) this.readIndexNow();
  }

  /**
   * Starts the index read now (CurrentRowsCheck#readNow): the list proved large (observe), or is
   * known large before its fetch proves it (its last sync, or the memory budget it was admitted to).
   */
  readIndexNow(): void {
    this.#large()?.readNow();
  }

  /** The fetched row to keep for writing, or undefined (CurrentRowsCheck#kept); every row of a small list. Kept rows are copies (keptEntry). */
  kept(row: NormalizedEntry): NormalizedEntry | undefined {
    return this.#current ? this.#current.kept(row) : keptEntry(row);
  }

  /** Rows kept before the index could match them, checked again against what it has read since (CurrentRowsCheck#recheck). */
  recheck(rows: NormalizedEntry[]): NormalizedEntry[] {
    return this.#current ? this.#current.recheck(rows) : rows;
  }

  /** Whether an index of current rows has been read whole: the rows kept since are only the ones to write. */
  get onlyChangesKept(): boolean {
    return this.#current?.onlyChangesKept ?? false;
  }

  /** The rows to write of a spill: the list is large now (CurrentRowsCheck#unmatched). */
  async unmatched(rows: NormalizedEntry[]): Promise<NormalizedEntry[]> {
    const current = this.#large();
    return current ? current.unmatched(rows) : rows;
  }

  /** Waits for an index read in flight (CurrentRowsCheck#readsEnded). */
  async readsEnded(): Promise<void> {
    await this.#current?.readsEnded();
  }

  /** No check for this fetch from now on (CurrentRowsCheck#off): a first load has no current rows. */
  off(): void {
    this.#enabled = false;
    this.#current?.off();
  }

  /** The collected list, checked when the list proved large (CurrentRowsCheck#finish). */
  async finish(collected: CollectedList): Promise<CollectedList> {
    return this.#current ? this.#current.finish(collected) : collected;
  }
}
