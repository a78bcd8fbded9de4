// What one entry may hold before its list is refused. Real reference lists stay far below every
// limit; the limits keep a hostile or broken answer from costing the process its stack or memory,
// and from reaching Postgres with what it would refuse mid-transaction. docs/reliability.md lists them.
import { ListFailure } from '../../util/error-codes.ts';

/** Objects and arrays nested inside an entry, the entry itself being level 1. */
export const MAX_DEPTH = 64;
/** One string value, in characters (UTF-16 code units). A 1 MB description is accepted. */
export const MAX_STRING_CHARS = 4 * 2 ** 20;
/** One object key, in characters: a field name, not a document. A 10 KB key is refused. */
export const MAX_KEY_CHARS = 1024;
/**
 * The entry key in UTF-8 bytes: it is indexed with environment, list and variant, and a btree row
 * holds at most about 2,700 bytes (SQLSTATE 54000 past that).
 */
export const MAX_ENTRY_KEY_BYTES = 1024;

/** An entry beyond one of the limits: a failure of its list, recorded and never retried. */
export class EntryLimitError extends ListFailure {
  readonly code = 'limit';
}

/**
 * Throws when a key or string of the value is longer than its limit. Only called for entries whose
 * canonical text is longer than the key limit, so the common small entry is never walked; the
 * walk itself is bounded by the depth limit, checked before it.
 */
export function checkSizes(value: unknown): void {
  if (typeof value === 'string') {
    if (value.length > MAX_STRING_CHARS) {
      throw new EntryLimitError(`holds a string of ${value.length} characters (limit ${MAX_STRING_CHARS})`);
    }
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) checkSizes(item);
    return;
  }
  for (const key in value) {
    if (key.length > MAX_KEY_CHARS) {
      throw new EntryLimitError(`holds an object key of ${key.length} characters (limit ${MAX_KEY_CHARS})`);
    }
    checkSizes((value as Record<string, unknown>)[key]);
  }
}

/** Throws when the entry key is too long for the index that keeps it unique. */
export function checkEntryKey(key: string): void {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: most keys need no count at all.
  if (key.length * 3 <= MAX_ENTRY_KEY_BYTES) return;
  const bytes = Buffer.byteLength(key);
  if (bytes > MAX_ENTRY_KEY_BYTES) {
    throw new EntryLimitError(`has an entry key of ${bytes} bytes (limit ${MAX_ENTRY_KEY_BYTES}, the most a Postgres index row holds with room to spare)`);
  }
}
