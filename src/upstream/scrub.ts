// A service may quote the credential it was sent in its error body ("invalid password 'x'"), and
// not always as it was sent: JSON escapes a tab as \t and a quote as \", an HTML or logging layer
// collapses a run of spaces, trims, or drops a tab. The scrubber removes every such spelling of
// each secret from the RAW text, before anything summarises, collapses or cuts it: a secret that
// reached a cut would survive in part.

/** What replaces a secret. */
export const REDACTED = '[redacted]';

/** Shortest secret scrubbed: a shorter one would redact ordinary words. */
const MIN_SECRET_LENGTH = 4;

/** Where the secret has whitespace, the echo may have any run of whitespace (raw or JSON/HTML-escaped), or none. */
const WHITESPACE_ECHO = String.raw`(?:\s|\\[tnrfb]|\\u00(?:0[9a-dA-D]|20|[aA]0)|&nbsp;|&#(?:9|10|13|32|160);)*`;

const regexEscape = (ch: string) => ch.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** One character of the secret as a JSON string, an HTML page or plain text may spell it. */
function characterEcho(ch: string): string {
  const spellings = new Set<string>([regexEscape(ch)]);
  const json = JSON.stringify(ch).slice(1, -1);
  if (json !== ch) spellings.add(regexEscape(json));
  // \u escapes, in either case of hex digit; a character past U+FFFF is two of them in a row.
  const unitEscape = (unit: string) =>
    String.raw`\\u` +
    unit
      .charCodeAt(0)
      .toString(16)
      .padStart(4, '0')
      .replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`);
  spellings.add(ch.split('').map(unitEscape).join(''));
  if (ch === '&') spellings.add('&amp;');
  if (ch === '<') spellings.add('&lt;');
  if (ch === '>') spellings.add('&gt;');
  if (ch === '"') spellings.add('&quot;');
  if (ch === "'") spellings.add('&#39;|&#x27;|&apos;');
  return spellings.size === 1 ? [...spellings][0]! : `(?:${[...spellings].join('|')})`;
}

/** The pattern of every echo of one secret: its characters in any of their spellings, its whitespace as any whitespace. */
function secretPattern(secret: string): string | undefined {
  const words = secret.split(/\s+/).filter((w) => w !== '');
  if (words.join('').length < MIN_SECRET_LENGTH) return undefined;
  return words.map((w) => Array.from(w, characterEcho).join('')).join(WHITESPACE_ECHO);
}

/**
 * A function that removes every echo of the secrets from a text: apply it to the raw text first,
 * and again to each string decoded from it, before any summary or cut.
 */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  const patterns = secrets.map(secretPattern).filter((p): p is string => p !== undefined);
  if (patterns.length === 0) return (text) => text;
  // Longest first, so a secret that contains another is removed whole.
  patterns.sort((a, b) => b.length - a.length);
  const all = new RegExp(patterns.join('|'), 'g');
  return (text) => text.replace(all, REDACTED);
}
