// The type of a typed column, inferred from the JSON values a field takes, and the lattice the
// types widen along. The lattice is a tree under `jsonb` with `null` (no value seen yet) below all:
//
//   jsonb ─┬─ boolean
//          └─ text ─┬─ numeric ── bigint
//                   ├─ date
//                   └─ timestamptz
//
// Two types join to their lowest common ancestor: bigint ⊔ numeric = numeric, bigint ⊔ text = text
// (a number's JSON text is kept exactly), date ⊔ timestamptz = text, boolean ⊔ anything else = jsonb
// (values of mixed kinds), and anything with an object or an array is jsonb. A column's type only
// ever moves up this tree, so every value a column ever held still casts to it.
import type { ListKey } from '../catalog/list-keys.ts';
import type { Queryable } from '../db/database.ts';
import { planInputsOfLists, typedColumnsInOrder } from './columns-sql.ts';
import { getListDefinition } from '../catalog/catalog.ts';

export type ColumnType = 'null' | 'boolean' | 'bigint' | 'numeric' | 'date' | 'timestamptz' | 'text' | 'jsonb';

const parent: Record<ColumnType, ColumnType | null> = {
  jsonb: null,
  boolean: 'jsonb',
  text: 'jsonb',
  numeric: 'text',
  date: 'text',
  timestamptz: 'text',
  bigint: 'numeric',
  null: null,
};

function depth(type: ColumnType): number {
  let d = 0;
  for (let t = parent[type]; t; t = parent[t]) d += 1;
  return d;
}

/** The narrowest type both values fit: their lowest common ancestor in the lattice. */
export function joinTypes(a: ColumnType, b: ColumnType): ColumnType {
  if (a === b || b === 'null') return a;
  if (a === 'null') return b;
  let x: ColumnType = a;
  let y: ColumnType = b;
  while (depth(x) > depth(y)) x = parent[x]!;
  while (depth(y) > depth(x)) y = parent[y]!;
  while (x !== y) {
    x = parent[x]!;
    y = parent[y]!;
  }
  return x;
}

/** The Postgres type of the column; a field only ever null reads as text until a value decides. */
export function sqlType(type: ColumnType): string {
  return type === 'null' ? 'text' : type;
}

const BIGINT_MAX = 9223372036854775807n;
const integerText = /^-?\d+$/;

/**
 * A number by its JSON text: an integer within bigint's range is bigint, anything else (a fraction,
 * an exponent, a 20-digit integer) numeric, so the cast never fails or rounds.
 */
export function numberType(text: string): ColumnType {
  if (!integerText.test(text)) return 'numeric';
  const digits = text.length - (text.startsWith('-') ? 1 : 0);
  if (digits <= 18) return 'bigint';
  const n = BigInt(text);
  return n <= BIGINT_MAX && n >= -BIGINT_MAX - 1n ? 'bigint' : 'numeric';
}

const isoDate = /^(\d{4})-(\d{2})-(\d{2})$/;
const isoDateTime = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)$/;

const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDay(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : monthDays[month - 1]!);
}

/**
 * `date` for an ISO-8601 calendar date, `timestamptz` for an ISO-8601 date-time with an offset (Z or
 * ±hh[:mm]), both checked field by field so that Postgres's cast cannot fail. A date-time without an
 * offset is text: its instant would depend on the reading session's TimeZone.
 */
export function stringType(value: string): ColumnType {
  // Both forms start with a digit: most strings (codes, descriptions) are text at the first character.
  const first = value.charCodeAt(0);
  if (!(first >= 48 && first <= 57)) return 'text';
  if (value.length === 10) {
    const m = isoDate.exec(value);
    return m && validDay(Number(m[1]), Number(m[2]), Number(m[3])) ? 'date' : 'text';
  }
  if (value.length < 17 || value.length > 40) return 'text';
  const m = isoDateTime.exec(value);
  if (!m || !validDay(Number(m[1]), Number(m[2]), Number(m[3]))) return 'text';
  const [hour, minute, second, offsetHours, offsetMinutes] = [m[4], m[5], m[6], m[7], m[8]].map((v) => Number(v ?? 0));
  const ok = hour! <= 23 && minute! <= 59 && second! <= 59 && offsetHours! <= 15 && offsetMinutes! <= 59;
  return ok ? 'timestamptz' : 'text';
}

/** The type of one JSON value as served. */
export function valueType(value: unknown): ColumnType {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
      // A safe integer is a bigint without building its text (once per entry on large lists).
      return Number.isSafeInteger(value) ? 'bigint' : numberType(String(value));
    case 'string':
      return stringType(value);
    default:
      if (JSON.isRawJSON(value)) {
        const text = value.rawJSON;
        return /^-?\d/.test(text) ? numberType(text) : valueType(JSON.parse(text));
      }
      return 'jsonb';
  }
}

/** Whether a value of type `value` fits a column of type `column` as it is (a null fits any). */
export function fitsType(column: ColumnType, value: ColumnType): boolean {
  return value === 'null' || joinTypes(column, value) === column;
}

// ── Column names ──
// Column names for the fields a list serves. A name, once recorded, never changes (the recorded
// schema keeps it), so the rules below only ever run for fields seen for the first time.

const plainIdentifier = /^[a-z_][a-z0-9_]{0,62}$/;
const MAX_BASE = 50;

/**
 * The field folded to a plain lower-case identifier: camelCase split with '_', lower-cased, every
 * run of other characters made one '_', '_' trimmed at both ends, 'f_' before a leading digit,
 * 'field' when nothing is left, cut to 50 characters (room for a suffix within Postgres's 63).
 */
export function foldFieldName(field: string): string {
  if (plainIdentifier.test(field)) return field;
  let name = field
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_BASE)
    .replace(/_+$/, '');
  if (name === '') name = 'field';
  if (/^\d/.test(name)) name = `f_${name}`;
  return name;
}

/**
 * Names for new fields, given the names already taken. Fields that are plain identifiers claim
 * their own name before folded ones, then each in field order, so the outcome does not depend on
 * the order the service sent them. A name that is a contract column of the view gets `_field`
 * (the field `code` becomes `code_field`); a name still taken gets `_2`, `_3`, ... No field is dropped.
 */
export function nameNewFields(fields: readonly string[], contractColumns: readonly string[], taken: Iterable<string>): Map<string, string> {
  const used = new Set<string>([...contractColumns, ...taken]);
  const contract = new Set(contractColumns);
  const ordered = [...fields].sort((a, b) => Number(!plainIdentifier.test(a)) - Number(!plainIdentifier.test(b)) || (a < b ? -1 : a > b ? 1 : 0));
  const names = new Map<string, string>();
  for (const field of ordered) {
    let base = foldFieldName(field);
    if (contract.has(base)) base = `${base}_field`;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    names.set(field, name);
  }
  return names;
}

// ── The fields a fetch serves, and their types ──

/**
 * Records the top-level fields, the JSON types their values take (for schema-drift detection), the
 * column type they infer (above) and how many values of each type they hold
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

// ── Typed columns as recorded ──

/** One typed column of a per-list view, as recorded in refdata.list_columns. */
export interface TypedColumn {
  /** The top-level field as the service serves it. */
  field: string;
  column: string;
  type: ColumnType;
  position: number;
  /** When the field was first recorded, and in which snapshot (null: inferred from stored history). */
  since: Date;
  sinceSnapshot: number | null;
}

export type TypedColumnRow = { field: string; column_name: string; data_type: ColumnType; position: number; since: Date; since_snapshot: string | null };

export function typedColumnOf(r: TypedColumnRow): TypedColumn {
  return {
    field: r.field,
    column: r.column_name,
    type: r.data_type,
    position: r.position,
    since: r.since,
    sinceSnapshot: r.since_snapshot === null ? null : Number(r.since_snapshot),
  };
}

/** The typed columns of a list as its views have them now, in view order. */
export async function readTypedColumns(q: Queryable, key: ListKey): Promise<TypedColumn[]> {
  const { rows } = await q.query<TypedColumnRow>(typedColumnsInOrder, [key]);
  return rows.map(typedColumnOf);
}

/** Lists' typed columns in view order, and whether a change of their views waits: one round trip. */
export async function readColumnsOfLists(q: Queryable, keys: readonly ListKey[]): Promise<Map<ListKey, { recorded: TypedColumn[]; waiting: boolean }>> {
  const { rows } = await q.query<Partial<TypedColumnRow> & { list_key: ListKey; waiting: boolean }>(planInputsOfLists, [keys]);
  const inputs = new Map<ListKey, { recorded: TypedColumn[]; waiting: boolean }>();
  for (const r of rows) {
    const of = inputs.get(r.list_key) ?? { recorded: [], waiting: r.waiting };
    if (r.field != null) of.recorded.push(typedColumnOf(r as TypedColumnRow));
    inputs.set(r.list_key, of);
  }
  return inputs;
}

// ── The views' descriptions ──
// The descriptions of the per-list views (refdata.<list>, refdata.<list>_history): their columns and the
// words of their COMMENTs, the contract's columns first, then one per typed column. The views are
// created from these (src/columns/recorded-columns.ts) and dbt's sources.yml describes them with the same
// words (src/dbt/descriptions.ts, which describes every other relation of schema refdata).

export interface ColumnDescription {
  name: string;
  description: string;
  /** The Postgres type, given for the typed columns (dbt's data_type). */
  dataType?: string;
}

export interface RelationDescription {
  name: string;
  kind: 'view' | 'table';
  description: string;
  columns: ColumnDescription[];
  /** The columns that identify a row: unique together, none null. */
  key: string[];
  /**
   * For a list whose entries are keyed by several fields (nmfc_codes: item and sub), the typed
   * columns of those fields with the environment and variant: the key a join should use.
   */
  fieldKey?: string[];
}

const listViewDescriptions: Record<ListKey, string> = {
  accessorials: 'Current pickup and delivery accessorials.',
  appointment_types: 'Current pickup and delivery appointment types.',
  charge_codes: 'Current charge codes of the versioned charge-code standard, one set per kept version.',
  charge_line_item_categories: 'Current charge line item categories.',
  document_types: 'Current supported document types.',
  equipment_types: 'Current equipment (trailer/container) types.',
  hazmat: 'Current hazardous material classes and divisions.',
  location_types: 'Current location type codes.',
  nmfc_codes: 'Current National Motor Freight Classification items.',
  package_types: 'Current package types of the platform.',
  carrier_package_types: 'Current package types of each carrier.',
  piece_types: 'Current piece types.',
  vendor_poc_roles: 'Current vendor point-of-contact roles and job titles.',
  service_levels: 'Current service levels.',
  shipment_modes: 'Current shipment modes (LTL, FTL, PARCEL, ...).',
  shipment_rep_roles: 'Current shipment representative roles.',
  stop_status_reason_codes: 'Current stop status reason codes.',
  shipment_statuses: 'Current shipment statuses (states).',
};

/** The variant column of a list view: named after what the variant is for that list. */
export function variantColumn(key: ListKey): ColumnDescription {
  if (key === 'charge_codes') {
    return { name: 'version', description: 'Charge-code version: a date sent as X-Service-Version, or unpinned (the account setting, else the latest).' };
  }
  if (key === 'carrier_package_types') {
    return { name: 'carrier', description: 'Carrier the package types belong to (fedex, ups, usps, dhl, ...).' };
  }
  return { name: 'variant', description: "Always '' for this list." };
}

export const environment = 'Environment label of the source (sandbox, production, ...).';
const currentColumns = {
  entry_key: "The entry's identity within its list.",
  code: "The entry's code as other APIs reference it.",
  description: 'Human-readable description.',
  payload: 'The whole entry as served, unknown fields included.',
  valid_from: 'Since when this version of the entry has been current.',
};
export const currentTail = (): ColumnDescription[] => Object.entries(currentColumns).map(([name, description]) => ({ name, description }));
const nonconforming: ColumnDescription = {
  name: 'nonconforming',
  description:
    "The entry's values that do not fit their typed column's type, as an object of column name to value as served (NULL in the typed column, kept in payload); null when every value fits.",
};

/** A typed column's comment: the field as served, its inferred type, and since when it is there. */
export function typedColumnDescription(c: TypedColumn): string {
  const type = c.type === 'null' ? 'text (only nulls served so far)' : c.type;
  const since = c.since.toISOString().slice(0, 10);
  const origin = c.sinceSnapshot === null ? 'inferred from the stored history' : `snapshot ${c.sinceSnapshot}`;
  return `Field ${JSON.stringify(c.field)} as served, typed ${type} (inferred from its values); since ${since} (${origin}).`;
}

function typedColumns(typed: readonly TypedColumn[]): ColumnDescription[] {
  return typed.map((c) => ({ name: c.column, description: typedColumnDescription(c), dataType: sqlType(c.type) }));
}

/**
 * The typed columns of a list's key fields, when they are several (entry_key joins them with '|').
 * A key field is always served, so its column exists once the list was synced; its name follows
 * the naming rule for a field seen first (Column names, above).
 */
function fieldKeyColumns(key: ListKey, contractColumns: readonly string[], typed: readonly TypedColumn[]): string[] | undefined {
  const { keyFields } = getListDefinition(key);
  if (keyFields.length < 2) return undefined;
  return keyFields.map((field) => {
    const recorded = typed.find((c) => c.field === field)?.column;
    const folded = foldFieldName(field);
    return recorded ?? (contractColumns.includes(folded) ? `${folded}_field` : folded);
  });
}

/** The current entries of one list (refdata.<list>): the contract's columns first, then one per field. */
export function listView(key: ListKey, typed: readonly TypedColumn[] = []): RelationDescription {
  const variant = variantColumn(key);
  const contract = [{ name: 'environment', description: environment }, variant, ...currentTail(), nonconforming];
  const columns = [...contract, ...typedColumns(typed)];
  const fields = fieldKeyColumns(
    key,
    contract.map((c) => c.name),
    typed,
  );
  return {
    name: key,
    kind: 'view',
    description: listViewDescriptions[key],
    columns,
    key: ['environment', variant.name, 'entry_key'],
    ...(fields ? { fieldKey: ['environment', variant.name, ...fields] } : {}),
  };
}

/** Every version of the entries of one list (refdata.<list>_history), typed like the current view. */
export function listHistoryView(key: ListKey, typed: readonly TypedColumn[] = []): RelationDescription {
  const variant = variantColumn(key);
  return {
    name: `${key}_history`,
    kind: 'view',
    description: `Every version of every entry of ${key}, with the typed columns of refdata.${key}: valid from valid_from until valid_to (null while current). As of time t: valid_from <= t and (valid_to is null or valid_to > t).`,
    columns: [
      { name: 'environment', description: environment },
      variant,
      ...currentTail().map((c) => (c.name === 'valid_from' ? { name: 'valid_from', description: 'When this version of the entry became current.' } : c)),
      { name: 'valid_to', description: 'When this version stopped being current; null while it is current.' },
      nonconforming,
      ...typedColumns(typed),
    ],
    key: ['environment', variant.name, 'entry_key', 'valid_from'],
  };
}

// ── Which values fit a column ──
// Which values of a fetch fit a recorded column, and whether the column must change type. A
// column's type is set by the values it first sees; a later value that does not fit while other
// values of the field still do is nonconforming (NULL in the column, kept in payload), and the
// column changes type only when none of the field's current values fit it (the field changed kind).

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
