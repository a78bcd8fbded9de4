import { wrap } from './wrap.ts';

/** Renders rows as a left-aligned text table with a header, for terminal output. */
export function formatTable(headers: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))));
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
export function fitTable(headers: string[], rows: Array<Array<string | number | null | undefined>>, width: number | undefined, keyColumns = 1): string {
  const table = formatTable(headers, rows);
  if (width === undefined || table.split('\n').every((l) => l.length <= width)) return table;
  const text = (c: string | number | null | undefined) => (c === null || c === undefined ? '' : String(c));
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
