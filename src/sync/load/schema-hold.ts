// The schema policy's hold (REFSYNC_SCHEMA_CHANGES): a fetch whose change of the list's columns its
// policy holds (src/columns/schema-policy.ts decides which, from the column plan) is recorded held,
// before anything is written.
import { alertFor } from '../../alerts/alert-row.ts';
import { wantsAlert, writeAlert } from '../../alerts/outbox.ts';
import type { ColumnPlan } from '../../columns/recorded-columns.ts';
import { columnsHeld, heldLabel, type HeldColumn } from '../../columns/schema-policy.ts';
import { schemaPolicyFor } from '../../config/schema-changes.ts';
import { SCHEMA_HELD } from '../../util/error-codes.ts';
import type { CollectedList } from '../collect/collect.ts';
import { insertSnapshot } from '../sql.ts';
import type { TargetTransaction } from '../target/target-transaction.ts';
import type { ApplyOptions, ApplyResult, ChangeKind } from '../outcome/target-outcome.ts';
import type { FieldDrift } from './field-drift.ts';
import { snapshotOf } from '../batch/apply-batch.ts';

/**
 * Holds the fetch when the list's policy does not take its change of columns and --accept-schema
 * was not given: a held snapshot naming each column, and the first time a `held` alert with the
 * schema diff (a fetch held again unchanged alerts no more, as the mass-removal hold). A first load
 * is the list's first shape, never held. Returns what was accepted otherwise (empty: nothing held).
 */
export async function holdForSchema(
  txn: TargetTransaction,
  collected: CollectedList,
  options: ApplyOptions,
  counts: Record<ChangeKind, number>,
  plan: ColumnPlan,
  drift: FieldDrift | undefined,
  beforeHold?: () => Promise<void>,
): Promise<{ held?: ApplyResult; accepted: HeldColumn[] }> {
  const { q: tx, target, state } = txn;
  const policy = schemaPolicyFor(target.source.schemaChanges, target.list.key);
  const changes = state.lastOk ? columnsHeld(policy, plan, drift?.removedNames ?? []) : [];
  if (changes.length === 0) return { accepted: [] };
  if (options.acceptSchema) return { accepted: changes };
  const key = target.list.key;
  const error = `held by schema policy ${policy}: ${changes.map(heldLabel).join(', ')}; run refsync sync --list ${key} --accept-schema to apply it`;
  const snapshot = snapshotOf(collected, options, state.now, {
    status: 'held',
    changed: false,
    counts,
    error,
    errorCode: SCHEMA_HELD,
    nonconforming: plan.nonconforming,
  });
  await beforeHold?.();
  const snapshotId = await insertSnapshot(tx, target, snapshot);
  const heldBefore = state.last?.status === 'held' && state.last.contentHash === collected.contentHash;
  if (!heldBefore && wantsAlert(target.source, 'held', key)) {
    await writeAlert(tx, alertFor(target, 'held', snapshotId, { reason: 'schema', policy, schema_diff: changes, message: error }));
  }
  return { held: { status: 'held', snapshotId, counts, baseline: false, error, errorCode: SCHEMA_HELD }, accepted: [] };
}
