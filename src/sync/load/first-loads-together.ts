// The first loads of a run's small lists, applied together: a fleet's first day, and every new
// source's, is a first load of each of its lists, most of them tens of entries. Applied one by one,
// each list paid a transaction of its own (its lock, its state, its snapshot, its rows, its columns'
// bookkeeping, its NOTIFY, its commit: about fifteen statements) on a connection of its own, and in a
// worker a BullMQ job of its own (docs/performance.md, P1 and P4). Gathered here as they arrive, they are
// written a few at a time in one transaction per group of lists: one statement for the locks, one
// for the states, then what a small first load alone writes too (first-loads-write.ts): one for the
// snapshots, one for the rows, a few for all the lists' columns and views, and the NOTIFYs with the
// COMMIT.
//
// Nothing is lost to a failure here: a list whose lock another sync holds, that another sync loaded
// meanwhile, or whose group's transaction failed, is not applied, and its caller syncs it again the
// ordinary way (as UnchangedLists does with the unchanged lists it could not record).
import { listVariant, type Target } from '../../catalog/targets.ts';
import type { Database, Queryable } from '../../db/database.ts';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';
import type { CollectedList } from '../collect/collect.ts';
import { firstLoadStates, tryLockTargetsStatement } from '../sql.ts';
import type { ApplyOptions } from './apply-types.ts';
import { writeFirstLoads, type LockedFirstLoad } from './first-loads-write.ts';
import { lastOkOf, type LastOk } from './unchanged-lists.ts';

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
