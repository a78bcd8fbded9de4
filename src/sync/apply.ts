import type { Target } from '../catalog/targets.ts';
import type { Connection, Queryable } from '../db/database.ts';
import { alertFor } from '../alerts/alert-row.ts';
import { ALERT_ENTRY_CAP, wantsAlert, writeAlert } from '../alerts/outbox.ts';
import type { CollectedList } from './collect.ts';
import { StaleIndexError } from './current-index.ts';
import { notifyChange } from './notify.ts';
import { previousSnapshots } from './previous.ts';
import { unnestRows, type StagingTable } from './staging.ts';
import { changeKinds, zeroCounts, type ApplyOptions, type ApplyResult, type ChangeKind } from './apply-types.ts';
import {
  changeSample,
  closeRows,
  countChanges,
  createDiff,
  currentRowsOf,
  hasCurrentRows,
  insertChanges,
  insertEntries,
  insertSnapshot,
  markReappeared,
  openedBy,
  rowsGeneration,
} from './sql.ts';
import { firstLoad, isFirstLoad, snapshotOf } from './first-load.ts';
import { recordImpact } from './impact.ts';
import { lockTarget } from './target-lock.ts';
import { evolveListColumns, type ColumnChange } from '../columns/recorded-columns.ts';

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

/**
 * Applies one fetched list in ONE transaction under the target's advisory lock: compares hashes,
 * diffs set-based against the current rows, and writes the snapshot, the SCD2 close/open, the change
 * rows, the typed columns of the list's views, the alert outbox rows and the NOTIFY together.
 * Either all of it commits or none of it.
 */
export async function applyList(
  conn: Connection,
  target: Target,
  collected: CollectedList,
  staging: StagingTable,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const env = target.source.environment;
  const listKey = target.list.key;
  const variant = target.variant;

  return conn.transaction(async (tx) => {
    await lockTarget(tx, env, listKey, variant);
    // Read after the lock, so times follow commit order even when transactions started out of order.
    const { rows: clock } = await tx.query<{ now: Date }>('select clock_timestamp() as now');
    const now = clock[0]!.now;
    const { lastOk, last } = await previousSnapshots(tx, env, listKey, variant);
    const baseline = !lastOk;

    if (lastOk?.contentHash === collected.contentHash) {
      const snapshotId = await insertSnapshot(tx, target, snapshotOf(collected, options, now, { status: 'ok', changed: false, counts: zeroCounts() }));
      return { status: 'unchanged', snapshotId, counts: zeroCounts(), baseline: false };
    }

    // The rows an index let through unstaged are current only if nothing was applied since it was read.
    if (collected.index && (await rowsGeneration(tx, target)) !== collected.index.generation) {
      throw new StaleIndexError(`${listKey}: the current rows changed while the list was fetched`);
    }
    const firstOfTarget = await isFirstLoad(!baseline, () => hasCurrentRows(tx, target));
    if (firstOfTarget && staging.rowsAppended === 0) {
      // Nothing was spilled, so the rows are all in memory: straight into history, no staging table.
      return firstLoad(tx, target, collected, unnestRows(collected.pending, 6), options, now);
    }
    await staging.append(collected.pending, tx);
    await staging.ensure(tx);
    const large = staging.rowsAppended > options.analyzeAfterRows;
    if (large) await tx.query(`analyze ${staging.name}`);

    if (firstOfTarget) {
      return firstLoad(tx, target, collected, { from: staging.name, params: [], rows: staging.rowsAppended }, options, now);
    }

    const diff = `${staging.name}_diff`;
    // With an index, staging holds only the entries not current as fetched, and the current side is
    // the rows no entry matched, read by primary key: every other current row is unchanged, by
    // digest and key (the generation check above proves the ids are still the current rows).
    await createDiff(tx, diff, staging.name, currentRowsOf(target, collected.index?.unseenIds));
    if (large) await tx.query(`analyze ${diff}`);
    if (!baseline) await markReappeared(tx, diff, target);
    const counts = zeroCounts();
    for (const r of await countChanges(tx, diff)) counts[r.change] = r.n;
    const current = collected.entryCount - counts.added - counts.reappeared + counts.removed;

    const maxFraction = target.source.maxRemovedFraction;
    const emptied = collected.entryCount === 0 && current > 0;
    const tooMany = current > 0 && counts.removed / current > maxFraction;
    if (!options.acceptRemovals && !baseline && (emptied || tooMany)) {
      const error = emptied
        ? `held: the fetch is empty but ${current} entries are current; run refsync sync --accept-removals to apply it`
        : `held: the fetch would remove ${counts.removed} of ${current} entries (more than ${maxFraction * 100}%); run refsync sync --accept-removals to apply it`;
      const snapshotId = await insertSnapshot(tx, target, snapshotOf(collected, options, now, { status: 'held', changed: false, counts, error }));
      const heldBefore = last?.status === 'held' && last.contentHash === collected.contentHash;
      if (!heldBefore && wantsAlert(target.source, 'held', listKey)) {
        await writeAlert(
          tx,
          alertFor(target, 'held', snapshotId, {
            current_count: current,
            fetched_count: collected.entryCount,
            would_remove: counts.removed,
            max_removed_fraction: maxFraction,
            message: error,
          }),
        );
      }
      return { status: 'held', snapshotId, counts, baseline, error };
    }

    const snapshotId = await insertSnapshot(tx, target, snapshotOf(collected, options, now, { status: 'ok', changed: true, counts }));
    let impactError: string | undefined;
    await closeRows(tx, diff, now, lastOk?.id ?? snapshotId);
    await insertEntries(tx, target, now, snapshotId, openedBy(diff));
    const columns = await evolveListColumns(tx, listKey, collected.columnTypes, snapshotId, now);

    if (!baseline) {
      await insertChanges(tx, diff, target, snapshotId, now);
      await writeChangeAlerts(tx, target, diff, snapshotId, counts);
      impactError = await recordImpact(tx, target, diff, snapshotId, now);
      const drift = lastOk?.fields ? fieldDrift(lastOk.fields, collected.fields) : undefined;
      if ((drift || columns.length) && wantsAlert(target.source, 'schema_changed', listKey)) {
        await writeAlert(tx, alertFor(target, 'schema_changed', snapshotId, schemaChange(drift, columns)));
      }
    }

    await notifyChange(tx, {
      environment: env,
      list_key: listKey,
      variant,
      snapshot_id: snapshotId,
      ...counts,
    });
    return { status: 'changed', snapshotId, counts, baseline, ...(impactError ? { impactError } : {}) };
  });
}

/** One digest alert per kind of change: the count and the first entries by key, capped. */
async function writeChangeAlerts(
  tx: Queryable,
  target: Target,
  diff: string,
  snapshotId: number,
  counts: Record<ChangeKind, number>,
): Promise<void> {
  const kinds = changeKinds.filter((k) => counts[k] > 0 && wantsAlert(target.source, k, target.list.key));
  if (kinds.length === 0) return;
  const rows = await changeSample(tx, diff, kinds, ALERT_ENTRY_CAP);
  for (const kind of kinds) {
    const sample = rows.filter((r) => r.change === kind);
    await writeAlert(
      tx,
      alertFor(target, kind, snapshotId, {
        count: counts[kind],
        entries: sample.map((r) => ({ entry_key: r.entry_key, code: r.code, description: r.description })),
        more: Math.max(0, counts[kind] - sample.length),
      }),
    );
  }
}
