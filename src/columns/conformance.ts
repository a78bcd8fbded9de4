// Which values of a fetch fit a recorded column, and whether the column must change type. A
// column's type is set by the values it first sees; a later value that does not fit while other
// values of the field still do is nonconforming (NULL in the column, kept in payload), and the
// column changes type only when none of the field's current values fit it (the field changed kind).
import { fitsType, joinTypes, type ColumnType } from './column-type.ts';

/** What one fetch served in a field: the type all its values join to, and how many values of each type. */
export interface FieldValues {
  type: ColumnType;
  counts: ReadonlyMap<ColumnType, number>;
}

/** How a recorded column meets a fetch's values. */
export interface Conformance {
  /** The column's type after the fetch, unless the field changed kind. */
  type: ColumnType;
  /** The fetch's values that do not fit `type`. */
  nonconforming: number;
  /** Set when none of the fetch's values fit `type`: the type the column takes if no other current value fits either. */
  changedKind?: ColumnType;
}

/** How many of the fetch's values do not fit `type`. */
export function unfitting(type: ColumnType, values: FieldValues): number {
  let n = 0;
  for (const [valueType, count] of values.counts) if (!fitsType(type, valueType)) n += count;
  return n;
}

/**
 * Meets a recorded column with a fetch's values. A column only ever seen null takes the type of its
 * first values. A bigint column widens to numeric for a number with a fraction: the same kind, and
 * every comparison on the column still holds.
 */
export function conform(recorded: ColumnType, values: FieldValues): Conformance {
  if (recorded === 'null') return { type: values.type, nonconforming: 0 };
  const type = recorded === 'bigint' && values.counts.has('numeric') ? 'numeric' : recorded;
  let served = 0;
  let fitting = 0;
  for (const [valueType, n] of values.counts) {
    served += n;
    if (fitsType(type, valueType)) fitting += n;
  }
  const result: Conformance = { type, nonconforming: served - fitting };
  if (served > 0 && fitting === 0) result.changedKind = joinTypes(type, values.type);
  return result;
}
