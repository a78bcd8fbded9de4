import type { Target } from '../../catalog/catalog.ts';
import type { Queryable } from '../../db/database.ts';
import { alertFor } from '../../alerts/alert-row.ts';
import { ALERT_ENTRY_CAP, wantsAlert, writeAlert } from '../../alerts/outbox.ts';
import type { HeldColumn } from '../../columns/schema-policy.ts';
import { applyColumnPlan, planListColumns, planTarget, type ColumnChange, type ColumnPlan } from '../../columns/recorded-columns.ts';
import { nonconformingExpression } from '../../columns/columns-sql.ts';
import { alertedChangeKinds, zeroCounts, type ApplyOptions, type ApplyResult, type ChangeKind } from '../outcome/target-outcome.ts';
import type { CollectedList } from '../collect/collect.ts';
import { recordImpact } from '../impact.ts';
import type { LoadResult } from './loader.ts';
import { notifyChange, snapshotOf, unchangedResult } from '../batch/apply-batch.ts';
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
  markReshaped,
  nonconformingSample,
  openedBy,
  rowsGeneration,
} from '../sql.ts';
import type { StagingTable } from './staging.ts';
import type { TargetTransaction } from '../target/target-transaction.ts';
import { noteWaitingViews, retryWaitingViews, viewsDigest } from './views-wait.ts';
import { fieldDrift, type FieldDrift } from './field-drift.ts';
import { holdForSchema } from './schema-hold.ts';
import { analyzeTable } from './load-sql.ts';

/**
 * Applies a fetched list to a target that has rows, in the transaction `txn` holds under the
 * target's lock: an unchanged list costs a hash compare and a snapshot row; otherwise the staged rows
 * are diffed set-based against the current ones, and the snapshot, the SCD2 close/open, the change
 * rows, the typed columns, the alert outbox rows and the NOTIFY are written together.
 */
export async function applyResync(txn: TargetTransaction, source: DiffSource, collected: CollectedList, options: ApplyOptions): Promise<LoadResult> {
  const { q: tx, target, state } = txn;
  const { now, lastOk } = state;
  // Unchanged, found so under the lock, and not recorded before the transaction (another sync held
  // or changed the list meanwhile, rows were staged, or its views wait, which are retried here): its
  // row is written here, by the writer of every snapshot row.
  if (lastOk?.contentHash === collected.contentHash) {
    // An unchanged fetch writes one snapshot row, which no data depends on: its commit need not wait
    // for the WAL to reach the disk (an fsync, most of an unchanged sync's database time). Postgres
    // still commits in order, and the next synchronous commit (the run's refresh) flushes it with its
    // own; a Postgres crash in between loses at most that row, never an entry (docs/reliability.md).
    // Views re-created by this commit (a wait that ends) must be as durable as any DDL.
    const row = snapshotOf(collected, options, now, { status: 'ok', changed: false, counts: zeroCounts(), nonconforming: lastOk.nonconforming });
    const snapshotId = await insertSnapshot(tx, target, row, { flush: Boolean(state.viewsWaiting) });
    if (state.viewsWaiting) await retryWaitingViews(txn, snapshotId);
    return unchangedResult(snapshotId);
  }
  // The rows an index let through unstaged are current only if nothing was applied since it was read.
  if (collected.index && (await rowsGeneration(tx, target)) !== collected.index.generation) {
    return { fetchAgain: `${target.list.key}: the current rows changed while the list was fetched` };
  }
  const diff = await source.complete(tx, collected, options);
  // Without an ok snapshot (a baseline), a key seen before is counted as added, as on a first load.
  if (state.lastOk) await markReappeared(tx, diff, target, source.streamed?.snapshotId);
  const drift = state.lastOk?.fields ? fieldDrift(state.lastOk.fields, collected.fields) : undefined;
  if (drift) await markReshaped(tx, diff, drift.names);
  const counts = zeroCounts();
  for (const r of await countChanges(tx, diff)) counts[r.change] = r.n;
  // Planned before anything is written: the schema policy may hold the list, and the snapshot row carries the count of values that do not fit.
  const columns = await planListColumns(tx, target.list.key, collected.fieldValues, planTarget(target));
  // A hold writes its snapshot only: versions a streamed resync wrote are rolled back first.
  const undo = source.streamed?.undo;
  const schema = await holdForSchema(txn, collected, options, counts, columns, drift, undo);
  if (schema.held) return { applied: schema.held };
  const held = await holdIfTooManyRemoved(txn, collected, options, counts, undo);
  if (held) return { applied: held };
  return { applied: await writeChanges(txn, diff, collected, options, { counts, drift, columns, accepted: schema.accepted, streamed: source.streamed }) };
}

/** Where a resync's diff comes from: the staged rows, diffed once fetched, or a streamed resync's. */
export interface DiffSource {
  /** The complete diff table (sql.ts#createDiff's columns), in the apply's transaction: its name. */
  complete(tx: Queryable, collected: CollectedList, options: ApplyOptions): Promise<string>;
  /** The diff's versions are closed and opened already (large/streamed-resync.ts). */
  streamed?: StreamedVersions;
}

/** What a streamed resync wrote while the list was fetched. */
export interface StreamedVersions {
  /** The snapshot id the opened versions carry, reserved: the snapshot row takes it. */
  snapshotId: number;
  /** Rolls the versions back, for a hold. */
  undo(): Promise<void>;
}

/** The staged rows' diff source (resync.ts). */
export function stagedDiff(target: Target, staging: StagingTable): DiffSource {
  return { complete: (tx, collected, options) => diffStaged(tx, target, staging, collected, options) };
}

/** Stages what is still in memory and diffs the complete staging table against the current rows: the diff table's name. */
async function diffStaged(tx: Queryable, target: Target, staging: StagingTable, collected: CollectedList, options: ApplyOptions): Promise<string> {
  return staging.complete(collected.pending, tx, async (staged) => {
    const large = staged.rows > options.analyzeAfterRows;
    if (large) await tx.query(analyzeTable(staged.name));
    const diff = `${staged.name}_diff`;
    // With an index, staging holds only the entries not current as fetched, and the current side is
    // the rows no entry matched, read by primary key: every other current row is unchanged, by
    // digest and key (the generation check proves the ids are still the current rows).
    await createDiff(tx, diff, staged.name, currentRowsOf(target, collected.index?.unseenIds));
    if (large) await tx.query(analyzeTable(diff));
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
  beforeHold?: () => Promise<void>,
): Promise<ApplyResult | undefined> {
  const { q: tx, target, state } = txn;
  const current = collected.entryCount - counts.added - counts.reappeared + counts.removed;
  const maxFraction = target.source.maxRemovedFraction;
  const emptied = collected.entryCount === 0 && current > 0;
  const tooMany = current > 0 && counts.removed / current > maxFraction;
  if (options.acceptRemovals || !state.lastOk || !(emptied || tooMany)) return undefined;
  const accept = `run refsync sync --list ${target.list.key} --accept-removals to apply it`;
  const error = emptied
    ? `held: the fetch is empty but ${current} entries are current; ${accept}`
    : `held: the fetch would remove ${counts.removed} of ${current} entries (more than ${maxFraction * 100}%); ${accept}`;
  await beforeHold?.();
  const snapshotId = await insertSnapshot(tx, target, snapshotOf(collected, options, state.now, { status: 'held', changed: false, counts, error }));
  const heldBefore = state.last?.status === 'held' && state.last.contentHash === collected.contentHash;
  if (!heldBefore && wantsAlert(target.source, 'held', target.list.key)) {
    const digest = {
      current_count: current,
      fetched_count: collected.entryCount,
      would_remove: counts.removed,
      max_removed_fraction: maxFraction,
      message: error,
    };
    await writeAlert(tx, alertFor(target, 'held', snapshotId, digest));
  }
  return { status: 'held', snapshotId, counts, baseline: false, error };
}

/** What the diff found and decided, before anything was written. */
interface Decided {
  counts: Record<ChangeKind, number>;
  drift: FieldDrift | undefined;
  columns: ColumnPlan;
  /** Column changes the schema policy would have held, applied on --accept-schema. */
  accepted: HeldColumn[];
  /** The versions are written already (a streamed resync). */
  streamed: StreamedVersions | undefined;
}

/** The snapshot, the SCD2 close and open, the typed columns and, unless a baseline, the change rows, alerts and impact. */
async function writeChanges(txn: TargetTransaction, diff: string, collected: CollectedList, options: ApplyOptions, decided: Decided): Promise<ApplyResult> {
  const { q: tx, target, state } = txn;
  const { now, lastOk } = state;
  const listKey = target.list.key;
  const { counts, drift, columns, accepted, streamed } = decided;
  const snapshotId = await insertSnapshot(tx, target, {
    ...snapshotOf(collected, options, now, { status: 'ok', changed: true, counts, nonconforming: columns.nonconforming, schemaAccepted: accepted.length > 0 }),
    ...(streamed ? { id: streamed.snapshotId } : {}),
  });
  if (!streamed) {
    await closeRows(tx, diff, now, lastOk?.id ?? snapshotId);
    await insertEntries(tx, target, now, snapshotId, openedBy(diff));
  }
  const views = await applyColumnPlan(tx, columns, snapshotId, now);
  await noteWaitingViews(tx, snapshotId, views);
  // Rows left behind by a pruned history, with no ok snapshot to compare with: a baseline again.
  const baseline = !lastOk;
  let impactError: string | undefined;
  if (!baseline) {
    await insertChanges(tx, diff, target, snapshotId, now);
    await writeChangeAlerts(tx, target, diff, snapshotId, counts);
    if (columns.nonconforming > 0 && wantsAlert(target.source, 'nonconforming', listKey)) await writeNonconformingAlert(tx, target, diff, snapshotId, columns);
    impactError = await recordImpact(tx, target, diff, snapshotId, now);
    if ((drift || columns.changes.length || views.applied) && wantsAlert(target.source, 'schema_changed', listKey)) {
      const digest = { ...schemaChange(drift, columns.changes), reshaped: counts.reshaped, ...viewsDigest(views) };
      await writeAlert(tx, alertFor(target, 'schema_changed', snapshotId, accepted.length ? { ...digest, accepted } : digest));
    }
  }
  notifyChange(txn, target, snapshotId, counts);
  return { status: 'changed', snapshotId, counts, baseline, ...(impactError ? { impactError } : {}) };
}

/**
 * The values that do not fit their column among the entries this snapshot added or changed, one
 * per column and entry: an odd value is alerted when its entry arrives or changes, not on every
 * sync that leaves the entry as it was.
 */
async function writeNonconformingAlert(tx: Queryable, target: Target, diff: string, snapshotId: number, plan: ColumnPlan): Promise<void> {
  const rows = await nonconformingSample(tx, diff, nonconformingExpression(plan.columns, 'new_payload'), ALERT_ENTRY_CAP);
  const values = rows.flatMap((r) => Object.entries(r.nonconforming).map(([column, value]) => ({ entry_key: r.entry_key, code: r.code, column, value })));
  if (values.length === 0) return;
  const entries = values.slice(0, ALERT_ENTRY_CAP);
  const count = Math.max(rows[0]!.total_values, values.length);
  await writeAlert(
    tx,
    alertFor(target, 'nonconforming', snapshotId, { count, entries, more: count - entries.length, snapshot_nonconforming: plan.nonconforming }),
  );
}

/** The schema_changed digest: fields that came and went (with their JSON types) and the view columns added or widened. */
function schemaChange(drift: FieldDrift | undefined, columns: ColumnChange[]): Record<string, unknown> {
  return { fields_added: drift?.added ?? [], fields_removed: drift?.removed ?? [], columns };
}

/** One digest alert per kind of change: the count and the first entries by key, capped. */
async function writeChangeAlerts(tx: Queryable, target: Target, diff: string, snapshotId: number, counts: Record<ChangeKind, number>): Promise<void> {
  const kinds = alertedChangeKinds.filter((k) => counts[k] > 0 && wantsAlert(target.source, k, target.list.key));
  if (kinds.length === 0) return;
  const rows = await changeSample(tx, diff, kinds, ALERT_ENTRY_CAP);
  for (const kind of kinds) {
    const sample = rows.filter((r) => r.change === kind);
    const entries = sample.map((r) => ({ entry_key: r.entry_key, code: r.code, description: r.description }));
    await writeAlert(tx, alertFor(target, kind, snapshotId, { count: counts[kind], entries, more: Math.max(0, counts[kind] - sample.length) }));
  }
}
