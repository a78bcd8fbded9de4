import { cellText, terminalText } from './terminal.ts';

/** A table cell: a value shown exactly (see cellText), or null for none. */
export type Cell = string | number | null | undefined;

/**
 * Renders rows as a left-aligned text table with a header, for terminal output. Every cell goes
 * through cellText: controls escaped, and a value with spaces at its ends or an empty one quoted.
 * Headers are escaped alike (terminalText): `refsync sql` shows column names the user's SQL chose.
 */
export function formatTable(headers: string[], rows: Cell[][]): string {
  const shownHeaders = headers.map(terminalText);
  const cells = rows.map((r) => r.map(cellText));
  const widths = shownHeaders.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(shownHeaders), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/**
 * The width output should fit: the terminal's when stdout is one, else COLUMNS when set (as shells
 * export it), else none: piped output keeps whole table rows for grep and awk.
 */
export function outputWidth(): number | undefined {
  if (process.stdout.isTTY && process.stdout.columns) return process.stdout.columns;
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns >= 40 ? columns : undefined;
}
