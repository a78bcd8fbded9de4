import { joinTypes, valueType, type ColumnType } from './column-type.ts';
import type { FieldValues } from './conformance.ts';

/**
 * Records the top-level fields, the JSON types their values take (for schema-drift detection), the
 * column type they infer (src/columns/column-type.ts) and how many values of each type they hold
 * (which values fit a recorded column), in the one pass over the entries. It observes entries as
 * stored (after normalizeEntry made their strings storable), so a column is typed from the values
 * its view reads.
 */
export class FieldTracker {
  readonly #fields = new Map<string, { json: Set<string>; values: Map<ColumnType, number>; column: ColumnType }>();

  observe(entry: unknown): void {
    if (entry === null || typeof entry !== 'object') return;
    // for-in rather than Object.entries: no arrays allocated per entry (JSON objects have no inherited keys).
    for (const field in entry) {
      const value = (entry as Record<string, unknown>)[field];
      let seen = this.#fields.get(field);
      if (!seen) this.#fields.set(field, (seen = { json: new Set(), values: new Map(), column: 'null' }));
      if (value === null) continue;
      seen.json.add(Array.isArray(value) ? 'array' : JSON.isRawJSON(value) ? 'number' : typeof value);
      const type = valueType(value);
      seen.values.set(type, (seen.values.get(type) ?? 0) + 1);
      seen.column = joinTypes(seen.column, type);
    }
  }

  /** Sorted `field:type` strings; a field only ever null reads `field:null`. */
  signature(): string[] {
    return [...this.#fields.entries()].map(([field, seen]) => `${field}:${seen.json.size ? [...seen.json].sort().join('|') : 'null'}`).sort();
  }

  /** Per field: the column type its values infer, and how many values of each type it holds. */
  fieldValues(): Map<string, FieldValues> {
    return new Map([...this.#fields].map(([field, seen]) => [field, { type: seen.column, counts: seen.values }]));
  }
}
