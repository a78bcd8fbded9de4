import { cellText } from './terminal.ts';
import { wrap } from './wrap.ts';

/** A table cell: a value shown exactly (see cellText), or null for none. */
export type Cell = string | number | null | undefined;

/**
 * Renders rows as a left-aligned text table with a header, for terminal output. Every cell goes
 * through cellText: controls escaped, and a value with spaces at its ends or an empty one quoted.
 */
export function formatTable(headers: string[], rows: Cell[][]): string {
  const cells = rows.map((r) => r.map(cellText));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
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

/**
 * A table when it fits `width`; otherwise one block per row: the first `keyColumns` cells on a line,
 * then `header value` pairs wrapped beneath, so nothing is cut and no line runs past the width.
 */
export function fitTable(headers: string[], rows: Cell[][], width: number | undefined, keyColumns = 1): string {
  const table = formatTable(headers, rows);
  if (width === undefined || table.split('\n').every((l) => l.length <= width)) return table;
  const text = cellText;
  return rows
    .map((row) => {
      const key = row.slice(0, keyColumns).map(text).filter(Boolean).join('  ');
      const pairs = headers
        .slice(keyColumns)
        .map((h, i) => [h, text(row[keyColumns + i])] as const)
        .filter(([, v]) => v !== '')
        .map(([h, v]) => `${h} ${v}`);
      return [key, ...wrap(pairs.join(', '), width - 2).map((l) => `  ${l}`)].join('\n');
    })
    .join('\n');
}
