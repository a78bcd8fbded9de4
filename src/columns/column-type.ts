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
