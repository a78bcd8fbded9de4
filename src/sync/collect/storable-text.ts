// Postgres text and jsonb cannot hold U+0000, and jsonb refuses a lone surrogate. Such code units
// are replaced by U+FFFD (the replacement character) in every string of an entry, values and keys
// at any depth, before anything else sees the entry: payload, code, description, entry key,
// digests and change rows then agree, and an unchanged answer hashes the same on every sync.

export const REPLACEMENT = '\ufffd';

/** NUL or any surrogate: the cheap test; a surrogate in a well-formed pair passes the exact one. */
const suspect = /[\u0000\ud800-\udfff]/;
/**
 * The same in canonical JSON text, which escapes NUL and lone surrogates (never paired ones):
 * `\u0000` and `\ud800`-`\udfff`. A literal backslash-u in a string may match too; that only costs
 * the exact walk.
 */
const escaped = /\\u(?:0000|d[89a-f])/i;

/** Whether canonical JSON text may hold a code unit Postgres cannot store. */
export function mayHoldUnstorable(canonical: string): boolean {
  return canonical.includes('\\u') && escaped.test(canonical);
}

/** The text with NUL and lone surrogates replaced by U+FFFD (the same string when there are none). */
export function storableText(text: string): string {
  if (!suspect.test(text)) return text;
  const fixed = text.toWellFormed();
  return fixed.includes('\u0000') ? fixed.replaceAll('\u0000', REPLACEMENT) : fixed;
}

/** Counts the strings (values and keys) a storable copy changed. */
export interface Replacements {
  count: number;
}

/**
 * A copy of the value with every string storable, counting the strings changed. Called only when
 * the canonical text showed a suspect escape, after the depth limit was checked.
 *
 * Two names of one object can become one once stored (`x\u0000` and `x\ufffd`, a lone surrogate
 * and U+FFFD): the name that sorts first (by UTF-16 code units) keeps its value and the other is
 * dropped (counted as a replacement), so the stored entry depends on what was served, never on the
 * order the service sent its names in.
 */
export function storableValue(value: unknown, replaced: Replacements): unknown {
  if (typeof value === 'string') {
    const text = storableText(value);
    if (text !== value) replaced.count += 1;
    return text;
  }
  if (value === null || typeof value !== 'object' || JSON.isRawJSON(value)) return value;
  if (Array.isArray(value)) return value.map((item) => storableValue(item, replaced));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const storableKey = storableText(key);
    if (storableKey !== key) replaced.count += 1;
    if (Object.hasOwn(out, storableKey)) continue;
    out[storableKey] = storableValue((value as Record<string, unknown>)[key], replaced);
  }
  return out;
}
