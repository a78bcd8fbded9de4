// The schema policy's decision (REFSYNC_SCHEMA_CHANGES): which of a column plan's changes, and of the
// fields gone from a fetch, a list's policy holds. Pure, beside the plan it reads; the policies
// themselves are the setting's (src/config/schema-changes.ts), and the hold is written by the sync
// (src/sync/load/schema-hold.ts).
import type { SchemaPolicy } from '../config/schema-changes.ts';
import type { ColumnType } from './typed-columns.ts';
import type { ColumnChange, ColumnPlan } from './recorded-columns.ts';

/** One change of the list's columns as a held snapshot and its alert name it: a column change, or a field gone. */
export type HeldColumn = Pick<ColumnChange, 'field' | 'column' | 'from'> & { change: ColumnChange['change'] | 'gone'; to?: ColumnType };

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
