import type { Target } from '../../catalog/targets.ts';
import type { Queryable } from '../../db/database.ts';
import { alertFor } from '../../alerts/alert-row.ts';
import { ALERT_ENTRY_CAP, wantsAlert, writeAlert } from '../../alerts/outbox.ts';
import { evolveListColumns, type ColumnChange } from '../../columns/recorded-columns.ts';
import { changeKinds, zeroCounts, type ApplyOptions, type ApplyResult, type ChangeKind } from './apply-types.ts';
import type { CollectedList } from '../collect/collect.ts';
import { recordImpact } from '../impact.ts';
import type { LoadResult } from './loader.ts';
import { notifyChange } from '../notify.ts';
import { snapshotOf } from './snapshot-row.ts';
import {
  changeSample,
  closeRows,
  countChanges,
  createDiff,
  currentRowsOf,
  insertChanges,
  insertEntries,
  insertSnapshot,
  markReappeared,
  openedBy,
  rowsGeneration,
} from '../sql.ts';
import type { StagingTable } from './staging.ts';
import type { TargetTransaction } from '../target/target-transaction.ts';

/**
 * Applies a fetched list to a target that has rows, in the transaction `txn` holds under the
 * target's lock: an unchanged list costs a hash compare and a snapshot row; otherwise the staged rows
 * are diffed set-based against the current ones, and the snapshot, the SCD2 close/open, the change
 * rows, the typed columns, the alert outbox rows and the NOTIFY are written together.
 */
export async function applyResync(txn: TargetTransaction, staging: StagingTable, collected: CollectedList, options: ApplyOptions): Promise<LoadResult> {
  const { q: tx, target, state } = txn;
  const { now, lastOk } = state;
  if (lastOk?.contentHash === collected.contentHash) {
    // An unchanged fetch writes one snapshot row, which no data depends on: its commit need not wait
    // for the WAL to reach the disk (an fsync, most of an unchanged sync's database time). Postgres
    // still commits in order, and the next synchronous commit (the run's refresh) flushes it with its
    // own; a Postgres crash in between loses at most that row, never an entry (docs/reliability.md).
    const row = snapshotOf(collected, options, now, { status: 'ok', changed: false, counts: zeroCounts() });
    const snapshotId = await insertSnapshot(tx, target, row, { flush: false });
    return { applied: { status: 'unchanged', snapshotId, counts: zeroCounts(), baseline: false } };
  }
  // The rows an index let through unstaged are current only if nothing was applied since it was read.
  if (collected.index && (await rowsGeneration(tx, target)) !== collected.index.generation) {
    return { fetchAgain: `${target.list.key}: the current rows changed while the list was fetched` };
  }
  const diff = await diffStaged(tx, target, staging, collected, options);
  // Without an ok snapshot (a baseline), a key seen before is counted as added, as on a first load.
  if (state.lastOk) await markReappeared(tx, diff, target);
  const counts = zeroCounts();
  for (const r of await countChanges(tx, diff)) counts[r.change] = r.n;
  const held = await holdIfTooManyRemoved(txn, collected, options, counts);
  if (held) return { applied: held };
  return { applied: await writeChanges(txn, diff, collected, options, counts) };
}

/** Stages what is still in memory and diffs the complete staging table against the current rows: the diff table's name. */
async function diffStaged(tx: Queryable, target: Target, staging: StagingTable, collected: CollectedList, options: ApplyOptions): Promise<string> {
  return staging.complete(collected.pending, tx, async (staged) => {
    const large = staged.rows > options.analyzeAfterRows;
    if (large) await tx.query(`analyze ${staged.name}`);
    const diff = `${staged.name}_diff`;
    // With an index, staging holds only the entries not current as fetched, and the current side is
    // the rows no entry matched, read by primary key: every other current row is unchanged, by
    // digest and key (the generation check proves the ids are still the current rows).
    await createDiff(tx, diff, staged.name, currentRowsOf(target, collected.index?.unseenIds));
    if (large) await tx.query(`analyze ${diff}`);
    return diff;
  });
}

/**
 * Holds a fetch that would empty the list or retire more than the source allows (unless removals
 * are accepted): records a held snapshot and, the first time, a `held` alert. Undefined to go on.
 */
async function holdIfTooManyRemoved(
  txn: TargetTransaction,
  collected: CollectedList,
  options: ApplyOptions,
  counts: Record<ChangeKind, number>,
): Promise<ApplyResult | undefined> {
  const { q: tx, target, state } = txn;
  const current = collected.entryCount - counts.added - counts.reappeared + counts.removed;
  const maxFraction = target.source.maxRemovedFraction;
  const emptied = collected.entryCount === 0 && current > 0;
  const tooMany = current > 0 && counts.removed / current > maxFraction;
  if (options.acceptRemovals || !state.lastOk || !(emptied || tooMany)) return undefined;
  const error = emptied
    ? `held: the fetch is empty but ${current} entries are current; run refsync sync --accept-removals to apply it`
    : `held: the fetch would remove ${counts.removed} of ${current} entries (more than ${maxFraction * 100}%); run refsync sync --accept-removals to apply it`;
  const snapshotId = await insertSnapshot(tx, target, snapshotOf(collected, options, state.now, { status: 'held', changed: false, counts, error }));
  const heldBefore = state.last?.status === 'held' && state.last.contentHash === collected.contentHash;
  if (!heldBefore && wantsAlert(target.source, 'held', target.list.key)) {
    const digest = { current_count: current, fetched_count: collected.entryCount, would_remove: counts.removed, max_removed_fraction: maxFraction, message: error };
    await writeAlert(tx, alertFor(target, 'held', snapshotId, digest));
  }
  return { status: 'held', snapshotId, counts, baseline: false, error };
}

/** The snapshot, the SCD2 close and open, the typed columns and, unless a baseline, the change rows, alerts and impact. */
async function writeChanges(
  txn: TargetTransaction,
  diff: string,
  collected: CollectedList,
  options: ApplyOptions,
  counts: Record<ChangeKind, number>,
): Promise<ApplyResult> {
  const { q: tx, target, state } = txn;
  const { now, lastOk } = state;
  const listKey = target.list.key;
  const snapshotId = await insertSnapshot(tx, target, snapshotOf(collected, options, now, { status: 'ok', changed: true, counts }));
  await closeRows(tx, diff, now, lastOk?.id ?? snapshotId);
  await insertEntries(tx, target, now, snapshotId, openedBy(diff));
  const columns = await evolveListColumns(tx, listKey, collected.columnTypes, snapshotId, now);
  // Rows left behind by a pruned history, with no ok snapshot to compare with: a baseline again.
  const baseline = !lastOk;
  let impactError: string | undefined;
  if (!baseline) {
    await insertChanges(tx, diff, target, snapshotId, now);
    await writeChangeAlerts(tx, target, diff, snapshotId, counts);
    impactError = await recordImpact(tx, target, diff, snapshotId, now);
    const drift = lastOk.fields ? fieldDrift(lastOk.fields, collected.fields) : undefined;
    if ((drift || columns.length) && wantsAlert(target.source, 'schema_changed', listKey)) {
      await writeAlert(tx, alertFor(target, 'schema_changed', snapshotId, schemaChange(drift, columns)));
    }
  }
  await notifyChange(tx, target, snapshotId, counts);
  return { status: 'changed', snapshotId, counts, baseline, ...(impactError ? { impactError } : {}) };
}

/** Fields that appeared and disappeared between two snapshots' field signatures. */
function fieldDrift(before: string[], after: string[]): { added: string[]; removed: string[] } | undefined {
  const b = new Set(before);
  const a = new Set(after);
  const added = after.filter((f) => !b.has(f));
  const removed = before.filter((f) => !a.has(f));
  return added.length || removed.length ? { added, removed } : undefined;
}

/** The schema_changed digest: fields that came and went (with their JSON types) and the view columns added or widened. */
function schemaChange(drift: { added: string[]; removed: string[] } | undefined, columns: ColumnChange[]): Record<string, unknown> {
  return { fields_added: drift?.added ?? [], fields_removed: drift?.removed ?? [], columns };
}

/** One digest alert per kind of change: the count and the first entries by key, capped. */
async function writeChangeAlerts(tx: Queryable, target: Target, diff: string, snapshotId: number, counts: Record<ChangeKind, number>): Promise<void> {
  const kinds = changeKinds.filter((k) => counts[k] > 0 && wantsAlert(target.source, k, target.list.key));
  if (kinds.length === 0) return;
  const rows = await changeSample(tx, diff, kinds, ALERT_ENTRY_CAP);
  for (const kind of kinds) {
    const sample = rows.filter((r) => r.change === kind);
    const entries = sample.map((r) => ({ entry_key: r.entry_key, code: r.code, description: r.description }));
    await writeAlert(tx, alertFor(target, kind, snapshotId, { count: counts[kind], entries, more: Math.max(0, counts[kind] - sample.length) }));
  }
}
