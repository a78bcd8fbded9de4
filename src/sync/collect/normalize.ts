import type { ListDefinition } from '../../catalog/catalog.ts';
import type { FieldTracker } from '../../columns/field-tracker.ts';
import { canonicalJson, entryDigest } from './canonical.ts';
import { checkEntryKey, checkSizes, EntryLimitError, MAX_KEY_CHARS } from './entry-limits.ts';
import { mayHoldUnstorable, storableText, storableValue } from './storable-text.ts';
import { ListFailure } from '../../util/error-codes.ts';

/** One entry ready to store: identity, the two columns data teams read most, and the entry as served. */
export interface NormalizedEntry {
  entryKey: string;
  code: string | null;
  description: string | null;
  /** The entry as served (JSON text; unknown fields kept). */
  payload: string;
  digest: string;
  /** Strings (values and keys) whose NUL or lone surrogates were replaced by U+FFFD; 0 nearly always. */
  replaced: number;
}

export class EntryShapeError extends ListFailure {
  readonly code = 'protocol';
}

function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // A number kept with every digit (see upstream/lossless-json.ts) reads as served.
  if (value !== null && typeof value === 'object' && JSON.isRawJSON(value)) return value.rawJSON;
  return null;
}

function firstText(entry: Record<string, unknown>, fields: readonly string[]): string | null {
  for (const field of fields) {
    const text = scalarText(entry[field]);
    if (text !== null && text !== '') return text;
  }
  return null;
}

/**
 * The entry key per the catalog rule: the key fields joined with '|'. A missing part of a composite
 * key counts as '' (NMFC items without a sub code); an entry with none of its key fields falls back
 * to the code rule, and failing that is a shape error naming the list.
 */
function entryKey(list: ListDefinition, entry: Record<string, unknown>, index: number): string {
  // Built without intermediate arrays: it runs once per entry, a million times for a large list.
  const fields = list.keyFields;
  let key = '';
  let found = false;
  for (let i = 0; i < fields.length; i++) {
    const part = scalarText(entry[fields[i]!]);
    if (part !== null && part !== '') found = true;
    key = i === 0 ? (part ?? '') : `${key}|${part ?? ''}`;
  }
  if (found) return key;
  const fallback = firstText(entry, list.codeFields);
  if (fallback !== null) return fallback;
  throw new EntryShapeError(`${list.key}: entry ${index} has none of the key fields ${list.keyFields.join(', ')} nor a code (${list.codeFields.join(', ')})`);
}

/** Names an entry in an error: its key when it has a readable one, else its position. */
function entryName(list: ListDefinition, entry: Record<string, unknown>, index: number): string {
  let key: string;
  try {
    key = storableText(entryKey(list, entry, index));
  } catch {
    return `entry ${index}`;
  }
  return key.length > 80 ? `entry ${index} (key '${key.slice(0, 80)}…')` : `entry '${key}'`;
}

/**
 * The entry as it will be stored. Limits are checked first (depth inside canonicalJson, before it
 * steps down; sizes only for entries long enough to break one); NUL and lone surrogates are
 * replaced only when the canonical text shows one, so the common entry costs one indexOf more.
 * `fields`, when given, observes the entry as stored.
 */
export function normalizeEntry(list: ListDefinition, raw: unknown, index: number, fields?: FieldTracker): NormalizedEntry {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new EntryShapeError(`${list.key}: entry ${index} is ${Array.isArray(raw) ? 'an array' : typeof raw}, not an object`);
  }
  let entry = raw as Record<string, unknown>;
  let key: string;
  let canonical: string;
  let replaced = 0;
  try {
    canonical = canonicalJson(entry);
    if (canonical.length > MAX_KEY_CHARS) checkSizes(entry);
    if (mayHoldUnstorable(canonical)) {
      const counted = { count: 0 };
      entry = storableValue(entry, counted) as Record<string, unknown>;
      replaced = counted.count;
      if (replaced > 0) canonical = canonicalJson(entry);
    }
    key = entryKey(list, entry, index);
    checkEntryKey(key);
  } catch (err) {
    if (!(err instanceof EntryLimitError)) throw err;
    throw new EntryLimitError(`${list.key}: ${entryName(list, entry, index)} ${err.message}`);
  }
  fields?.observe(entry);
  return {
    entryKey: key,
    code: firstText(entry, list.codeFields),
    description: firstText(entry, list.descriptionFields),
    payload: canonical,
    digest: entryDigest(canonical),
    replaced,
  };
}
