// The schema policy of a list (REFSYNC_SCHEMA_CHANGES): whether a fetch's change of the list's
// columns holds the list, decided from the column plan before anything is written.
import { alertFor } from '../../alerts/alert-row.ts';
import { wantsAlert, writeAlert } from '../../alerts/outbox.ts';
import type { ColumnType } from '../../columns/column-type.ts';
import type { ColumnPlan } from '../../columns/recorded-columns.ts';
import { schemaPolicyFor, type SchemaPolicy } from '../../config/schema-changes.ts';
import { SCHEMA_HELD } from '../../util/error-codes.ts';
import type { CollectedList } from '../collect/collect.ts';
import { insertSnapshot } from '../sql.ts';
import type { TargetTransaction } from '../target/target-transaction.ts';
import type { ApplyOptions, ApplyResult, ChangeKind } from './apply-types.ts';
import type { FieldDrift } from './field-drift.ts';
import { snapshotOf } from './snapshot-row.ts';

/** One change of the list's columns, as a held snapshot and its alert name it. */
export interface HeldColumn {
  field: string;
  column: string;
  change: 'added' | 'widened' | 'gone';
  from?: ColumnType;
  to?: ColumnType;
}

/** A change of kind: any widening but bigint → numeric, and not the first type of a column only ever null. */
const breaking = (c: HeldColumn) => c.change !== 'widened' || (c.from !== 'null' && !(c.from === 'bigint' && c.to === 'numeric'));

/** The column changes of a plan (and the fields gone from the fetch) that a policy holds. */
export function columnsHeld(policy: SchemaPolicy, plan: ColumnPlan, goneFields: readonly string[]): HeldColumn[] {
  if (policy === 'evolve') return [];
  const gone = new Set(goneFields);
  const changes: HeldColumn[] = [
    ...plan.added.map((a): HeldColumn => ({ field: a.field, column: a.column, change: 'added', to: a.type })),
    ...plan.widened.map((w): HeldColumn => ({ field: w.field, column: w.column, change: 'widened', from: w.from, to: w.type })),
    ...plan.columns.filter((c) => gone.has(c.field)).map((c): HeldColumn => ({ field: c.field, column: c.column, change: 'gone', from: c.type })),
  ];
  return policy === 'freeze' ? changes : changes.filter((c) => c.change !== 'added' && breaking(c));
}

/** `is_charge_code: boolean → jsonb`, `transit_days: new (bigint)`, `length_ft: gone (bigint)`. */
export function heldLabel(c: HeldColumn): string {
  if (c.change === 'added') return `${c.column}: new (${c.to})`;
  if (c.change === 'gone') return `${c.column}: gone (${c.from})`;
  return `${c.column}: ${c.from} → ${c.to}`;
}

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
