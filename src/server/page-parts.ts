// The pieces every status-server page is built from: the page shell (same-origin stylesheet, no
// script), times, statuses, reasons, links between the pages, and tables that turn into labelled
// cards on a phone. Every value goes through `html`, so upstream text is escaped wherever it lands.
import { formatTime } from '../read/format-time.ts';
import type { TargetKey } from '../read/target-history.ts';
import { html, type SafeHtml } from './html.ts';

/** The first line of a stored error, bounded: the one-line reason for tables. */
export function reason(text: string | null): string {
  return (text ?? '').split('\n')[0]!.slice(0, 300);
}

export const time = (value: Date | null | undefined) => html`<time datetime="${value ? new Date(value).toISOString() : ''}">${formatTime(value)}</time>`;

export const status = (value: string) => html`<span class="status status-${value}">${value}</span>`;

/** The list page of a target (relative, so the pages work under any path prefix a proxy adds). */
export function listHref(t: TargetKey): string {
  const q = new URLSearchParams({ environment: t.environment, list: t.list_key, variant: t.variant });
  return `list?${q}`;
}

export const runHref = (id: number) => `run?id=${id}`;

export const listLink = (t: TargetKey, text: SafeHtml | string = t.list_key) => html`<a href="${listHref(t)}">${text}</a>`;

export const runLink = (id: number | null) => (id === null ? '' : html`<a href="${runHref(id)}">#${id}</a>`);

export interface Column {
  label: string;
  /** Right-aligned tabular numbers. */
  num?: boolean;
  /** Long text that may wrap anywhere. */
  wide?: boolean;
  /** A short value read as one word, never broken across lines (a list key, a version `2024-06-11`). */
  whole?: boolean;
}

/**
 * A table whose cells carry their column's label: wide screens see a table, a phone (status.css,
 * under 40rem) one labelled card per row, so no page needs a horizontal scroll. A cell's content is
 * one span, the value's grid item beside its label.
 */
export function dataTable(
  columns: readonly Column[],
  rows: ReadonlyArray<{ cells: ReadonlyArray<SafeHtml | string | number | null>; class?: string }>,
): SafeHtml {
  const cls = (c: Column) => [c.num ? 'num' : '', c.wide ? 'reason' : '', c.whole ? 'whole' : ''].filter(Boolean).join(' ');
  return html`<table class="cards">
<thead><tr>${columns.map((c) => html`<th class="${c.num ? 'num' : ''}">${c.label}</th>`)}</tr></thead>
<tbody>${rows.map(
    (
      r,
    ) => html`<tr class="${r.class ?? ''}">${r.cells.map((cell, i) => html`<td class="${cls(columns[i]!)}" data-label="${columns[i]!.label}"><span>${cell}</span></td>`)}</tr>
`,
  )}</tbody></table>`;
}

/** A whole page: same-origin stylesheet and icon, no script, a way back to `/`. */
export function page(title: string, body: SafeHtml, asOf: Date): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="favicon.svg">
<link rel="stylesheet" href="status.css">
</head>
<body>
<header><h1>${title}</h1>
<p>As of ${time(asOf)} · <a href="./">status</a> · <a href="admin/queues">queue dashboard</a> · <a href="metrics">metrics</a></p></header>
<main>
${body}
</main>
</body>
</html>
`.text;
}
