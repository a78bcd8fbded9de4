// What a small first load writes, once its target's lock is held, it is known to be a first load
// and its snapshot id is reserved: its columns and views, its snapshot row, its entries and its
// NOTIFY. The same few set statements for one list as for a group of them, so a list fetched alone
// (first-load-alone.ts) and a run's lists applied together (first-loads-together.ts) take one path.
// A first load is a baseline: no change rows and no alerts.
import type { Target } from '../../catalog/targets.ts';
import { planTarget, recordColumnsTogether } from '../../columns/recorded-columns.ts';
import { waitingMessage } from '../../columns/waiting-views.ts';
import { copyIn } from '../../db/copy-in.ts';
import type { Queryable } from '../../db/database.ts';
import type { CollectedList } from '../collect/collect.ts';
import type { NormalizedEntry } from '../collect/normalize.ts';
import { changeNotice } from '../notify.ts';
import { copyEntries, insertEntriesOfTargets, insertSnapshots, notifyChangesStatement, type SnapshotRow } from '../sql.ts';
import { firstLoadCounts, type ApplyOptions } from './apply-types.ts';
import { copyChunks, entryCopyPrefix } from './row-format.ts';
import { usesCopy, type RowWriteRule } from './row-write-rule.ts';
import { snapshotOf } from './snapshot-row.ts';

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
