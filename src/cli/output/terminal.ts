// Text that the program did not write itself (upstream codes, descriptions, error bodies and header
// values, webhook answers, the user's own data) is escaped where it is put into a line for a person,
// by the functions here: one escape for the terminal, one for JSON. The program's own control
// sequences (the progress line's carriage return and erase-line) are written as they are.
import { escapeControls } from '../../util/control-chars.ts';

/**
 * Outside text as it may appear in a terminal line: every control character but tab and newline
 * (C0, DEL, C1, bidi overrides and isolates) shown as `\uXXXX`, so it cannot move the cursor, set a
 * title or reorder what a reader sees.
 */
export function terminalText(text: unknown): string {
  return escapeControls(text === null || text === undefined ? '' : String(text));
}

/** A value needs quotes to be seen exactly: empty, space at either end, a line break or tab, or a leading quote. */
const needsQuotes = /^$|^\s|\s$|[\t\n\r]|^"/;

/**
 * A value in a table cell, shown exactly: `'APT '` prints as `"APT "` and an empty string as `""`
 * (a JSON string, so a quote or line break inside reads as `\"` or `\n`), anything else bare; null
 * and undefined (no value) print as nothing. A bare value never starts with a quote, so the two cannot
 * be confused. Controls are escaped as by terminalText.
 */
export function cellText(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  return escapeControls(needsQuotes.test(value) ? JSON.stringify(value) : value);
}

/** A value as JSON output: the same JSON value, with the controls JSON leaves raw (C1, bidi) escaped too. */
export function jsonText(value: unknown, indent: number | undefined = 2): string {
  return escapeControls(JSON.stringify(value, null, indent));
}

/** `text` cut to at most `max` characters, the cut marked with `…`. */
export function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(max - 1, 0))}…`;
}
