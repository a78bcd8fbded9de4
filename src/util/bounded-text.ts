// Text from outside (an upstream's error body, a field name, a receiver's answer) is bounded where
// refsync stores or sends it, and bounded in BYTES: a limit in characters lets one control
// character take 6 bytes once JSON-escaped and one emoji 4, and Postgres's limits (a NOTIFY
// payload under 8000 bytes, an index row) are in bytes. Each cut is whole code points, so no
// lone surrogate (which jsonb refuses) is ever made.

const ELLIPSIS = '…';
/** The ellipsis in UTF-8, which is also what it takes inside JSON text. */
const ELLIPSIS_BYTES = 3;

/**
 * The bytes one code point takes inside a JSON string as JSON.stringify writes it, which is never
 * less than its UTF-8 bytes: so a bound in these bytes holds for the text column and for every
 * JSON document (payload, NOTIFY, webhook body) the text is put in.
 */
function jsonCost(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2; // \" and \\
  if (cp === 0x08 || cp === 0x09 || cp === 0x0a || cp === 0x0c || cp === 0x0d) return 2; // \b \t \n \f \r
  if (cp < 0x20) return 6; // \u00XX
  if (cp >= 0xd800 && cp <= 0xdfff) return 6; // a lone surrogate, written \udXXX
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp < 0x10000) return 3;
  return 4;
}

/** The bytes `text` takes inside a JSON string (quotes not counted); at least its UTF-8 length. */
export function jsonTextBytes(text: string): number {
  let bytes = 0;
  for (const ch of text) bytes += jsonCost(ch.codePointAt(0)!);
  return bytes;
}

/**
 * `text`, or its longest prefix of whole code points that with `…` appended takes at most
 * `maxBytes` inside a JSON string (and so also as UTF-8 in a text column).
 */
export function cutToBytes(text: string, maxBytes: number): string {
  // No code unit takes more than 6 bytes: short text needs no count.
  if (text.length * 6 <= maxBytes) return text;
  if (jsonTextBytes(text) <= maxBytes) return text;
  const budget = maxBytes - ELLIPSIS_BYTES;
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const cost = jsonCost(ch.codePointAt(0)!);
    if (bytes + cost > budget) break;
    bytes += cost;
    end += ch.length;
  }
  return budget < 0 ? '' : `${text.slice(0, end)}${ELLIPSIS}`;
}

/** `text` cut to at most `maxChars` code points (with `…` as the last one when cut); never splits a surrogate pair. */
export function cutToChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const points = Array.from(text);
  if (points.length <= maxChars) return text;
  return `${points.slice(0, Math.max(0, maxChars - 1)).join('')}${ELLIPSIS}`;
}
