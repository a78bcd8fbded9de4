// A run's batch: the small lists it takes as they are fetched and writes together after its last
// one, so that a run of many small lists pays a handful of statements rather than a transaction per
// list (docs/performance.md, P1 and P4). A list's sync asks the batch once, at the end of a fetch that
// never spilled, whether it takes the list: an unchanged list is set aside for one statement that
// records them all (below), a list with no ok snapshot is gathered for a few transactions
// that load them all (FirstLoadsTogether, below), and any other is not taken and is applied at once
// through its diff. What the batch could not write is nothing of it written: its caller syncs that
// list again the ordinary way (settleBatch, below).
//
// A list synced on its own (a worker's target job, a list synced again) is a batch of one
// (ApplyBatch.ofOne), which read no last ok snapshot: reading it first would be a round trip more
// than the list's unchanged fetch costs. Every fetch it is asked about may be unchanged, and the one
// statement that would record it decides, at once: recorded, or not taken (changed, a first load, its
// lock taken by another sync) and applied at once the ordinary way, the fetch in hand.
import { type Target, listVariant } from '../../catalog/catalog.ts';
import type { Connection, Database, Queryable } from '../../db/database.ts';
import type { CollectedList, SummedUp, NormalizedEntry } from '../collect/collect.ts';
import { type ApplyOptions, type ApplyResult, type TargetOutcome, firstLoadCounts, type ChangeKind, zeroCounts } from '../outcome/target-outcome.ts';
import type { LoadResult } from '../load/loader.ts';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';
import {
  firstLoadStates,
  tryLockTargetsStatement,
  copyEntries,
  insertEntriesOfTargets,
  insertSnapshots,
  notifyChangesStatement,
  type SnapshotRow,
  copyChunks,
  entryCopyPrefix,
  recordUnchangedListsStatement,
  type FetchedFields,
} from '../sql.ts';
import { planTarget, recordColumnsTogether, waitingMessage } from '../../columns/recorded-columns.ts';
import { copyIn } from '../../db/copy-in.ts';
import { usesCopy, type RowWriteRule } from '../load/row-write-rule.ts';
import { lastOkOfSource } from '../load/load-sql.ts';
import { REMOVALS_HELD, type ErrorCode } from '../../util/error-codes.ts';
import type { TargetTransaction } from '../target/target-transaction.ts';

/**
 * What the batch did with a list it took: set aside as unchanged, gathered as a first load (`firstLoad`),
 * or, in a batch of one, recorded as unchanged at once (`applied`).
 */
export type Taken = Extract<LoadResult, { setAside: true }> | { applied: ApplyResult };

/**
 * What the batch's apply wrote: each taken list's snapshot id, or null for one of which nothing was
 * written (another sync holds or changed it meanwhile, its views wait, its group failed), to sync
 * again the ordinary way.
 */
export interface BatchApplied {
  ids: Map<Target, number | null>;
  /**
   * Why the unchanged lists' one statement failed, when it did: their lists are not in `ids`, as the
   * statement may have committed before its answer was lost.
   */
  unrecorded?: unknown;
}

/** One run's batch: its unchanged lists and its small first loads, written together after its last list. */
export class ApplyBatch {
  /** What the run keeps until apply(); undefined in a batch of one, which read no last ok snapshot and keeps nothing. */
  readonly #kept: { unchanged: UnchangedLists; firstLoads: FirstLoadsTogether } | undefined;
  readonly #lastOk: ReadonlyMap<string, LastOk> | undefined;

  /** `lastOk`: the run's lists' last ok snapshots as it read them when it began (readLastOk). */
  constructor(lastOk: ReadonlyMap<string, LastOk>, firstLoads: FirstLoadsApply);
  /** A batch of one, which read no last ok snapshot (ApplyBatch.ofOne). */
  constructor();
  constructor(lastOk?: ReadonlyMap<string, LastOk>, firstLoads?: FirstLoadsApply) {
    this.#kept = lastOk && firstLoads && { unchanged: new UnchangedLists(lastOk), firstLoads: new FirstLoadsTogether(lastOk, firstLoads) };
    this.#lastOk = lastOk;
  }

  /**
   * The batch of a list synced on its own: it read no last ok snapshot, so each fetch may be
   * unchanged, and take() records it in one statement at once, or does not take it.
   */
  static ofOne(): ApplyBatch {
    return new ApplyBatch();
  }

  /** Whether the batch read its lists' last ok snapshots: only then is a served digest worth comparing with them. */
  get readLastOk(): boolean {
    return this.#kept !== undefined;
  }

  /** The target's entries at its last ok snapshot as the run read it; undefined for one never synced, or in a batch of one. */
  lastEntryCount(target: Target): number | undefined {
    return this.#lastOk && lastOkOf(this.#lastOk, target)?.entryCount;
  }

  /**
   * The target's last ok snapshot as the run read it, when the fetch's served digest is that
   * snapshot's (UnchangedLists#servedBefore): a fetch finished with it is taken as unchanged.
   */
  servedBefore(target: Target, servedDigest: string | null): SummedUp | undefined {
    return this.#kept?.unchanged.servedBefore(target, servedDigest);
  }

  /**
   * Takes a small fetched list into the batch, or not: set aside when its content hash is its last
   * ok snapshot's as the run read it, gathered when the run read no ok snapshot of it. In a batch of one,
   * which read none, it may be unchanged: recorded at once in one statement on the fetch's connection
   * `conn` (recordIfUnchanged, its run's progress counted with it when options.advanceRun says so).
   * Undefined when not taken: a list changed since (or, in a batch of one, not recorded by that
   * statement), to apply at once.
   */
  async take(conn: Connection, target: Target, collected: CollectedList, options: ApplyOptions): Promise<Taken | undefined> {
    if (!this.#kept) return recordIfUnchanged(conn, target, collected, options);
    if (this.#kept.unchanged.setAside(target, fetchedFields(collected, options))) return { setAside: true };
    if (this.#kept.firstLoads.gather(target, collected, options)) return { setAside: true, firstLoad: true };
    return undefined;
  }

  /**
   * The run's targets, of which those with no ok snapshot may yet be gathered (FirstLoadsTogether#expect):
   * returned, the run's possible first loads.
   */
  expect(targets: readonly Target[]): Target[] {
    return this.#kept?.firstLoads.expect(targets) ?? [];
  }

  /** A target's sync has ended, taken or not: the first loads gathered need not wait for it. */
  done(target: Target): void {
    this.#kept?.firstLoads.done(target);
  }

  /**
   * Writes what the batch took, once every gathered first load's apply has ended: the unchanged lists
   * in one statement on `db` (beside the first loads' last applies), as snapshots of run `runId`.
   * Nothing in a batch of one, whose list was written as it was taken, if at all.
   */
  async apply(db: Database, runId: number): Promise<BatchApplied> {
    if (!this.#kept) return { ids: new Map() };
    const loading = this.#kept.firstLoads.applied();
    const recorded = await this.#kept.unchanged.record(db, runId).then(
      (ids) => ({ ids }),
      (unrecorded: unknown) => ({ ids: new Map<Target, number | null>(), unrecorded }),
    );
    const ids = new Map([...recorded.ids, ...(await loading)]);
    return 'unrecorded' in recorded ? { ids, unrecorded: recorded.unrecorded } : { ids };
  }
}

// ── Settling a batch ──

/** What a run does with its batch's lists once written: the part of settling them that differs between runs. */
export interface BatchSettling {
  /** Where the unchanged lists are recorded, and in which run. */
  db: Database;
  runId: number;
  /** A list the batch wrote, its outcome now bearing its snapshot: settled and told as the run settles any. */
  recorded(outcome: TargetOutcome): Promise<TargetOutcome>;
  /**
   * A list of which the batch wrote nothing: synced again the ordinary way (its new outcome), or left
   * to a later sync (its outcome, still set aside).
   */
  again(outcome: TargetOutcome): Promise<TargetOutcome>;
  /**
   * The unchanged lists' one statement failed, perhaps after its commit: throw to stop the settle,
   * return nothing to leave their outcomes set aside, or return a database to write the batch on
   * instead (in process, the run claim's own connection when the pool was refused one).
   */
  unrecorded(err: unknown): Promise<Database | undefined>;
}

/**
 * Writes the run's batch (ApplyBatch#apply) and settles each list it took, replacing its outcome in
 * `outcomes`: recorded with its snapshot, or synced again where nothing of it was written. Nothing
 * is written when no outcome is set aside (none taken, or all settled before).
 */
export async function settleBatch(batch: ApplyBatch, outcomes: TargetOutcome[], how: BatchSettling): Promise<void> {
  if (!outcomes.some((outcome) => outcome.setAside)) return;
  let { ids, unrecorded } = await batch.apply(how.db, how.runId);
  while (unrecorded !== undefined) {
    const elsewhere = await how.unrecorded(unrecorded);
    if (!elsewhere) break;
    ({ ids, unrecorded } = await batch.apply(elsewhere, how.runId));
  }
  for (const [i, outcome] of outcomes.entries()) {
    if (!outcome.setAside || !ids.has(outcome.target)) continue;
    const snapshotId = ids.get(outcome.target) ?? null;
    outcomes[i] = snapshotId === null ? await how.again(outcome) : await how.recorded(recordedOutcome(outcome, snapshotId));
  }
}

// ── First loads applied together ──
// The first loads of a run's small lists, applied together: a fleet's first day, and every new
// source's, is a first load of each of its lists, most of them tens of entries. Applied one by one,
// each list paid a transaction of its own (its lock, its state, its snapshot, its rows, its columns'
// bookkeeping, its NOTIFY, its commit: about fifteen statements) on a connection of its own, and in a
// worker a BullMQ job of its own (docs/performance.md, P1 and P4). Gathered here as they arrive, they are
// written a few at a time in one transaction per group of lists: one statement for the locks, one
// for the states, then what a small first load alone writes too (writeFirstLoads, below): one for the
// snapshots, one for the rows, a few for all the lists' columns and views, and the NOTIFYs with the
// COMMIT.
//
// Nothing is lost to a failure here: a list whose lock another sync holds, that another sync loaded
// meanwhile, or whose group's transaction failed, is not applied, and its caller syncs it again the
// ordinary way (as UnchangedLists does with the unchanged lists it could not record).

/** A small first load gathered until its run applies it. */
interface GatheredLoad {
  target: Target;
  collected: CollectedList;
  options: ApplyOptions;
  /** Told the load's snapshot id once applied, or null when it was not (nothing of it written). */
  applied: (snapshotId: number | null) => void;
}

/** Where and how gathered loads are applied: the database, a logger for a group that fails, and the transactions at once. */
export interface FirstLoadsApply {
  db: Database;
  logger: Logger;
  /** Transactions at once, each on a connection of its own (default 1). */
  parallel?: number;
  /**
   * Start an apply as soon as a load is gathered (default): for lists fetched side by side. Without, the
   * loads wait for applied(), which applies them all: for lists fetched one after the other, which
   * group commit would apply one by one.
   */
  startOnGather?: boolean;
  /** How long gathered loads wait for the run's others while no apply runs (default GATHER_MS). */
  gatherMs?: number;
}

/**
 * How long the first load gathered while no apply runs waits for the run's other lists before its apply
 * starts. A first sync's lists arrive within 10-30 ms of each other: started at once, the first
 * list's apply ran alone and the 22 that came while it ran went in one transaction after it, on one
 * core (docs/performance.md, P1). Gathered, they are split over the
 * transactions at once. A list slow to fetch keeps the others' rows waiting this long at most, and
 * the sync's end, which waits for its last list, not at all.
 */
export const GATHER_MS = 50;

/**
 * The run's small first loads. Applied as group commit does: the first gathered load starts an apply
 * once the run's other lists have come or GATHER_MS have passed, and the loads gathered while it runs
 * wait for the next, which takes all of them. A first sync's lists, which arrive within a few
 * milliseconds of each other, go in one or two applies at once; a list that is slow to fetch never
 * keeps the others' rows from being written. Told which of the run's lists may still come (expect,
 * done), it starts the last loads at once beside a running apply, on the connections that apply
 * leaves free: nothing gathered later could join them.
 */
export class FirstLoadsTogether {
  readonly #lastOk: ReadonlyMap<string, LastOk>;
  readonly #apply: FirstLoadsApply;
  #gathered: GatheredLoad[] = [];
  readonly #results = new Map<Target, Promise<number | null>>();
  /** Transactions of the applies running, a connection each: none when no apply runs. */
  #busy = 0;
  /** The run's lists that may be first loads, neither gathered nor ended yet; undefined until expect(). */
  #awaited: Set<Target> | undefined;
  /** While the gathered loads wait for the run's others (GATHER_MS): its timer. */
  #gathering: NodeJS.Timeout | undefined;

  /** `lastOk`: the run's lists' last ok snapshots as it read them when it began (readLastOk). */
  constructor(lastOk: ReadonlyMap<string, LastOk>, apply: FirstLoadsApply) {
    this.#lastOk = lastOk;
    this.#apply = apply;
  }

  /**
   * Gathers a fetch that never spilled when its list had no ok snapshot as the run began (most likely
   * a first load; checked again under its lock when applied), and starts an apply unless one runs.
   * Whether it was gathered.
   */
  gather(target: Target, collected: CollectedList, options: ApplyOptions): boolean {
    if (lastOkOf(this.#lastOk, target)) return false;
    this.#awaited?.delete(target);
    // The fetch's duration as it ended, not as it waited for its apply.
    const fetchMs = options.durationMs();
    const result = new Promise<number | null>((applied) => {
      this.#gathered.push({ target, collected, options: { ...options, durationMs: () => fetchMs }, applied });
    });
    this.#results.set(target, result);
    if (this.#apply.startOnGather ?? true) this.#next();
    return true;
  }

  /**
   * The run's targets: those with no ok snapshot as it began may yet be gathered, until gathered or done().
   * Returns them: the run's possible first loads.
   */
  expect(targets: readonly Target[]): Target[] {
    const possible = targets.filter((target) => !lastOkOf(this.#lastOk, target));
    this.#awaited = new Set(possible);
    return possible;
  }

  /** A target's sync has ended, gathered or not: once none may come, what is gathered need not wait. */
  done(target: Target): void {
    if (this.#awaited?.delete(target) && (this.#apply.startOnGather ?? true)) this.#next();
  }

  /**
   * Each gathered list's snapshot id once every apply has ended, or null for one not applied (nothing of
   * it written), for the caller to sync again the ordinary way.
   */
  async applied(): Promise<Map<Target, number | null>> {
    this.#next(true);
    const results = [...this.#results];
    return new Map(await Promise.all(results.map(async ([target, result]) => [target, await result] as const)));
  }

  /**
   * Applies what is gathered, unless an apply runs: its end starts the next. The last loads (none may
   * come after them) start beside a running apply when it leaves a connection free. With no apply
   * running and more of the run's lists to come, the gathered loads wait for them (GATHER_MS at most),
   * unless `now`: the window has passed, the loads waited for an apply, or applied() wants them all.
   */
  #next(now = false): void {
    if (this.#gathered.length === 0) return;
    const parallel = Math.max(1, this.#apply.parallel ?? 1);
    const last = this.#awaited?.size === 0 && this.#busy < parallel;
    if (this.#busy > 0 && !last) return;
    if (!now && this.#awaited?.size) {
      this.#gathering ??= setTimeout(() => {
        this.#gathering = undefined;
        this.#next(true);
      }, this.#apply.gatherMs ?? GATHER_MS);
      return;
    }
    clearTimeout(this.#gathering);
    this.#gathering = undefined;
    const groups = groupsOf(this.#gathered, parallel - this.#busy);
    this.#gathered = [];
    this.#busy += groups.length;
    void this.#applyGroups(groups).finally(() => {
      this.#busy -= groups.length;
      // The loads gathered meanwhile have waited for this apply: they need not wait for more.
      this.#next(true);
    });
  }

  /**
   * Applies the groups in a transaction each, at once (the lists of one list key in one group, as
   * they share its columns). Never throws: a group that fails is told null, and its lists are synced
   * again the ordinary way.
   */
  async #applyGroups(groups: GatheredLoad[][]): Promise<void> {
    const { db, logger } = this.#apply;
    await Promise.all(
      groups.map(async (group) => {
        let ids: Map<Target, number>;
        try {
          ids = await applyGroup(db, group);
        } catch (err) {
          logger.info(
            { lists: group.map((h) => listVariant(h.target)), err: errorLine(err) },
            'first loads not applied together: each is synced again on its own',
          );
          ids = new Map();
        }
        for (const h of group) h.applied(ids.get(h.target) ?? null);
      }),
    );
  }
}

/**
 * What a list key's first loads cost a group's transaction beyond their rows, in rows: its columns
 * and views (a first sync replaces two views per list, about a millisecond of Postgres CPU each,
 * where a row's insert is about ten microseconds) and its snapshot rows. Balanced on rows alone, a
 * first sync's groups were 1, 3, 8 and 10 lists (nmfc_codes' 310 rows alone), and the group of ten
 * lists' twenty views was the sync's last 74 ms.
 */
const LIST_KEY_COST_IN_ROWS = 150;

/** What grouping reads of a gathered load: its list and variant, and its entries. */
type GroupedLoad = Pick<GatheredLoad, 'target'> & { collected: Pick<CollectedList, 'entryCount'> };

/** The gathered loads in at most `parts` groups, a list key's variants in one, the groups about equal in cost (rows and lists). */
export function groupsOf<T extends GroupedLoad>(gathered: T[], parts: number): T[][] {
  const byKey = new Map<string, T[]>();
  for (const h of gathered) byKey.set(h.target.list.key, [...(byKey.get(h.target.list.key) ?? []), h]);
  const groups: Array<{ cost: number; loads: T[] }> = [];
  const costOf = (loads: T[]) => loads.reduce((n, h) => n + h.collected.entryCount + 1, LIST_KEY_COST_IN_ROWS);
  for (const loads of [...byKey.values()].sort((a, b) => costOf(b) - costOf(a))) {
    if (groups.length < parts) groups.push({ cost: 0, loads: [] });
    const cheapest = groups.reduce((min, g) => (g.cost < min.cost ? g : min));
    cheapest.loads.push(...loads);
    cheapest.cost += costOf(loads);
  }
  // In list order within a group: a list's variants are planned in one order, a later one on what
  // an earlier one adds (recorded-columns.ts); two groups never take the same list's column lock.
  return groups.map((g) => g.loads.sort((a, b) => listVariant(a.target).localeCompare(listVariant(b.target))));
}

/** One group's transaction: the lists it could lock and that are still first loads, applied; their snapshot ids. */
async function applyGroup(db: Database, group: GatheredLoad[]): Promise<Map<Target, number>> {
  const environment = group[0]!.target.source.environment;
  return db.withConnection((conn) =>
    conn.transaction(
      async (q, opened, atCommit) => {
        const { now, loads } = await lockedFirstLoads(q, environment, group, opened);
        await writeFirstLoads({ q, now, atCommit }, loads);
        return new Map(loads.map((l) => [l.target, l.snapshotId]));
      },
      tryLockTargetsStatement(
        environment,
        group.map((h) => h.target),
      ),
    ),
  );
}

/**
 * The group's loads whose locks were free (the transaction's opening tried them) and that are still
 * first loads under them, each with its snapshot id reserved; and the clock, read after the locks.
 */
async function lockedFirstLoads(
  q: Queryable,
  environment: string,
  group: readonly GatheredLoad[],
  opened: ReadonlyArray<Record<string, unknown>>,
): Promise<{ now: Date; loads: LockedFirstLoad[] }> {
  const free = new Set(opened.filter((r) => r.locked === true).map((r) => listVariant({ list: { key: String(r.list_key) }, variant: String(r.variant) })));
  const locked = group.filter((h) => free.has(listVariant(h.target)));
  if (locked.length === 0) return { now: new Date(), loads: [] };
  const { now, states } = await firstLoadStates(
    q,
    environment,
    locked.map((h) => h.target),
  );
  const loads = locked.flatMap((h, i) => (states[i]!.firstLoad ? [{ ...h, snapshotId: states[i]!.snapshotId }] : []));
  return { now, loads };
}

// ── What a small first load writes ──
// What a small first load writes, once its target's lock is held, it is known to be a first load
// and its snapshot id is reserved: its columns and views, its snapshot row, its entries and its
// NOTIFY. The same few set statements for one list as for a group of them, so a list fetched alone
// (first-load-alone.ts) and a run's lists applied together (FirstLoadsTogether, below) take one path.
// A first load is a baseline: no change rows and no alerts.

/** A first load under its target's lock, with the snapshot id reserved for it. */
export interface LockedFirstLoad {
  target: Target;
  collected: CollectedList;
  options: ApplyOptions;
  snapshotId: number;
}

/** The transaction the loads are written in: its queries, its clock (read after the locks), and the statements its COMMIT carries. */
export interface FirstLoadsTransaction {
  q: Queryable;
  now: Date;
  atCommit: (statement: string) => void;
}

/**
 * Writes first loads of one environment in the transaction that holds their targets' locks: their
 * columns (a few statements for all), their snapshot rows (one), their entries (one: an unnest, or
 * with `rule` a COPY once they are enough rows for one), and their NOTIFYs with the COMMIT.
 */
export async function writeFirstLoads(tx: FirstLoadsTransaction, loads: readonly LockedFirstLoad[], rule?: RowWriteRule): Promise<void> {
  if (loads.length === 0) return;
  const environment = loads[0]!.target.source.environment;
  await insertSnapshots(tx.q, environment, await snapshotsWithColumns(tx.q, loads, tx.now));
  const withRows = loads.map((l) => ({ target: l.target, snapshotId: l.snapshotId, rows: rowsOf(l.collected) })).filter((l) => l.rows.length > 0);
  const rows = withRows.reduce((n, l) => n + l.rows.length, 0);
  if (rule && usesCopy(rule, rows)) {
    await copyIn(tx.q, copyEntries, copyLinesOf(withRows, tx.now));
  } else if (rows > 0) {
    await insertEntriesOfTargets(tx.q, environment, tx.now, withRows);
  }
  tx.atCommit(notifyChangesStatement(loads.map((l) => changeNotice(l.target, l.snapshotId, firstLoadCounts(l.collected.entryCount)))));
}

/** The lists' rows in COPY's text format for copyEntries, each row behind its list's target, time and snapshot. */
function* copyLinesOf(lists: ReadonlyArray<{ target: Target; snapshotId: number; rows: readonly NormalizedEntry[] }>, now: Date): Generator<string> {
  for (const l of lists) yield* copyChunks(l.rows, `${entryCopyPrefix(l.target, now, l.snapshotId)}\t`);
}

/**
 * The loads' columns planned and recorded by the one column planner (recorded-columns.ts), in a few
 * statements for all. Then each load's snapshot row, which counts its values that do not fit and
 * names its views' wait.
 */
async function snapshotsWithColumns(
  q: Queryable,
  loads: readonly LockedFirstLoad[],
  now: Date,
): Promise<Array<{ target: Target; row: SnapshotRow & { id: number } }>> {
  const recorded = await recordColumnsTogether(
    q,
    loads.map((l) => ({ key: l.target.list.key, observed: l.collected.fieldValues, target: planTarget(l.target), snapshotId: l.snapshotId })),
    now,
  );
  return loads.map((load, i) => {
    const counts = firstLoadCounts(load.collected.entryCount);
    const { plan, settled } = recorded[i]!;
    const row = snapshotOf(load.collected, load.options, now, { status: 'ok', changed: true, counts, nonconforming: plan.nonconforming, id: load.snapshotId });
    if (settled?.waiting) row.error = waitingMessage(settled.waiting);
    return { target: load.target, row: { ...row, id: load.snapshotId } };
  });
}

/** A fetch's rows, an identical duplicate once (the collector has failed a key with two contents). */
function rowsOf(collected: CollectedList): NormalizedEntry[] {
  return collected.pending.length > collected.entryCount ? onePerKey(collected.pending) : collected.pending;
}

/** The rows with the first of each key kept: the collector has already failed a key with two contents. */
export function onePerKey(rows: NormalizedEntry[]): NormalizedEntry[] {
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.entryKey) && seen.add(r.entryKey));
}

// ── Unchanged lists recorded together ──

/** A target's last ok snapshot as a run reads it before its lists: its size, content hash and served digest. */
export interface LastOk {
  entryCount: number;
  contentHash: string;
  fields: string[] | null;
  /** The digest of its entries as served (src/sync/collect/collect.ts#ServedDigest); null for a large list, or one recorded without it. */
  servedDigest: string | null;
  replacedValues: number;
}

/** The last ok snapshot of each target of the environment, in one read (refdata.target_last_ok). */
export async function readLastOk(db: Database, environment: string): Promise<Map<string, LastOk>> {
  const { rows } = await db.query<{
    list_key: string;
    variant: string;
    entry_count: number;
    content_hash: string;
    fields: string[] | null;
    served_digest: string | null;
    replaced_values: number;
  }>(lastOkOfSource, [environment]);
  return new Map(
    rows.map((r) => [
      listVariant({ list: { key: r.list_key }, variant: r.variant }),
      { entryCount: r.entry_count, contentHash: r.content_hash, fields: r.fields, servedDigest: r.served_digest, replacedValues: r.replaced_values },
    ]),
  );
}

/** The target's entry in readLastOk's map. */
export function lastOkOf(lastOk: ReadonlyMap<string, LastOk>, target: Target): LastOk | undefined {
  return lastOk.get(listVariant(target));
}

/**
 * The unchanged lists of one run (a run job's, or a `refsync sync` source's), recorded together after
 * its last list. A list whose fetch has the content hash its last ok snapshot had when the run began
 * is set aside (no statement), and one statement records them all at the end
 * (refdata.record_unchanged_lists, migrations 0013, 0018 and 0020), each checked again under its lock: P4's hourly
 * slot made a statement per list. What that statement does not record (another sync changed or
 * holds the list meanwhile, its views wait) is the caller's to sync again; a list whose hash differs
 * takes the ordinary way at once.
 */
export class UnchangedLists {
  readonly #lastOk: ReadonlyMap<string, LastOk>;
  readonly #aside: Array<{ target: Target; fetched: FetchedFields }> = [];

  constructor(lastOk: ReadonlyMap<string, LastOk>) {
    this.#lastOk = lastOk;
  }

  /**
   * The target's last ok snapshot as the run read it, when the fetch's served digest is that
   * snapshot's: the fetch then has its content hash, count and fields without being normalised. Not
   * for a snapshot that replaced values, whose warning each fetch logs again with the keys.
   */
  servedBefore(target: Target, servedDigest: string | null): SummedUp | undefined {
    const last = lastOkOf(this.#lastOk, target);
    if (servedDigest === null || last?.servedDigest !== servedDigest || last.replacedValues > 0 || last.fields === null) return undefined;
    return { contentHash: last.contentHash, entryCount: last.entryCount, fields: last.fields };
  }

  /**
   * Sets the fetch aside, to be recorded with the others, when its hash is the one the run read;
   * false when it is not (changed, or never loaded).
   */
  setAside(target: Target, fetched: FetchedFields): boolean {
    const expected = lastOkOf(this.#lastOk, target)?.contentHash;
    if (expected === undefined || fetched.contentHash !== expected) return false;
    this.#aside.push({ target, fetched });
    return true;
  }

  /**
   * Records the lists set aside in one statement (a transaction of its own, its commit not waiting for
   * the WAL flush: the caller's count of the run's progress does). Each list's snapshot id, or null
   * for one not recorded.
   */
  async record(db: Database, runId: number): Promise<Map<Target, number | null>> {
    const recorded = new Map<Target, number | null>();
    if (this.#aside.length === 0) return recorded;
    const environment = this.#aside[0]!.target.source.environment;
    const rows = await db.withConnection((conn) => conn.alone(recordUnchangedListsStatement(environment, runId, this.#aside)));
    const ids = new Map(
      rows.map((r) => [listVariant({ list: { key: String(r.list_key) }, variant: String(r.variant) }), r.snapshot_id === null ? null : Number(r.snapshot_id)]),
    );
    for (const { target } of this.#aside) recorded.set(target, ids.get(listVariant(target)) ?? null);
    return recorded;
  }
}

/** A set-aside outcome once recorded as snapshot `snapshotId`. */
export function recordedOutcome(outcome: TargetOutcome, snapshotId: number): TargetOutcome {
  const { setAside: _recorded, ...synced } = outcome;
  return { ...synced, snapshotId };
}

// ── The snapshot row ──

/** The snapshot of a fetched list, from what the collector measured and what the load found. */
export function snapshotOf(
  collected: CollectedList,
  options: ApplyOptions,
  now: Date,
  row: Pick<SnapshotRow, 'status' | 'changed' | 'counts'> & {
    id?: number;
    error?: string;
    errorCode?: ErrorCode;
    nonconforming?: number;
    schemaAccepted?: boolean;
  },
): SnapshotRow {
  const snapshot: SnapshotRow = {
    ...fetchedFields(collected, options),
    fetchedAt: now,
    status: row.status,
    changed: row.changed,
    counts: row.counts,
    nonconforming: row.nonconforming ?? 0,
    error: row.error ?? null,
    errorCode: row.errorCode ?? (row.status === 'held' ? REMOVALS_HELD : null),
    schemaAccepted: row.schemaAccepted ?? false,
  };
  if (row.id !== undefined) snapshot.id = row.id;
  return snapshot;
}

/**
 * What the fetch itself measured of its snapshot: part of every snapshot row (snapshotOf), and all an
 * unchanged one needs (refdata.record_unchanged_lists takes it as it is).
 */
export function fetchedFields(collected: CollectedList, options: ApplyOptions): FetchedFields {
  return {
    runId: options.runId,
    contentHash: collected.contentHash,
    entryCount: collected.entryCount,
    fields: collected.fields,
    pages: collected.pages,
    durationMs: options.durationMs(),
    replacedValues: collected.replacedValues,
    servedDigest: collected.servedDigest,
  };
}

// ── NOTIFY of changes ──

export interface ChangeNotice {
  environment: string;
  list_key: string;
  variant: string;
  snapshot_id: number;
  added: number;
  removed: number;
  modified: number;
  reappeared: number;
  /** Entries changed only by fields that appeared in or left the list: not edits, not in `modified`. */
  reshaped: number;
}

/**
 * NOTIFY refdata_changes for a snapshot, in its transaction's COMMIT message: Postgres sends it only
 * once the transaction commits anyway. It is a wake-up signal (listeners re-read the tables); the
 * payload stays far below Postgres's 8000-byte limit.
 */
export function notifyChange(txn: Pick<TargetTransaction, 'atCommit'>, target: Target, snapshotId: number, counts: Record<ChangeKind, number>): void {
  txn.atCommit(notifyChangesStatement([changeNotice(target, snapshotId, counts)]));
}

/** The payload of a snapshot's NOTIFY refdata_changes, as JSON text. */
export function changeNotice(target: Target, snapshotId: number, counts: Record<ChangeKind, number>): string {
  const notice: ChangeNotice = {
    environment: target.source.environment,
    list_key: target.list.key,
    variant: target.variant,
    snapshot_id: snapshotId,
    ...counts,
  };
  return JSON.stringify(notice);
}

// ── An unchanged list alone ──

/** The result of an unchanged fetch, recorded as snapshot `snapshotId` (the run's progress counted with it, when said). */
export function unchangedResult(snapshotId: number, runAdvanced = false): { applied: ApplyResult } {
  const applied: ApplyResult = { status: 'unchanged', snapshotId, counts: zeroCounts(), baseline: false };
  if (runAdvanced) applied.runAdvanced = true;
  return { applied };
}

/**
 * Records the fetch in one statement that is its own transaction if it is unchanged: a batch of one
 * through refdata.record_unchanged_lists, the one writer of the unchanged record (migration 0020), for
 * a list whose last ok snapshot was not read first (ApplyBatch.ofOne, and a large list's resync that
 * staged nothing). The one round trip an unchanged list costs, with the run's progress counted in it
 * when options.advanceRun says so. Undefined when it is not recorded (it is not unchanged, or another
 * sync holds its lock right now: nothing written, the lock released): the load then applies it in a
 * transaction of its own, as ever, whose apply records it if it is unchanged by then. Tried first
 * because nearly every sync of a reference list is unchanged; a changed list pays this one round trip
 * more.
 */
export async function recordIfUnchanged(
  conn: Connection,
  target: Target,
  collected: CollectedList,
  options: ApplyOptions,
): Promise<{ applied: ApplyResult } | undefined> {
  const fetched = fetchedFields(collected, options);
  const [row] = await conn.alone(recordUnchangedListsStatement(target.source.environment, fetched.runId, [{ target, fetched }], options.advanceRun));
  const snapshotId = row?.snapshot_id;
  if (snapshotId === null || snapshotId === undefined) return undefined;
  return unchangedResult(Number(snapshotId), row!.run_advanced === true);
}
