// A list's history drawn on the server as inline SVG (no script): its entry count after each ok
// sync as a line, the changes each run made as stacked bars (added, removed, modified), and the
// syncs that were held or failed as marks on the time axis. Colours come from status.css classes:
// the page's CSP allows no inline style, and presentation attributes would ignore the dark scheme.
import { formatTime } from '../read/format-time.ts';
import type { TargetSnapshotRow } from '../read/target-history.ts';
import { html, type SafeHtml } from './html.ts';

// The drawing's own units; the SVG scales to the width of its box, from a phone's 390 px (about
// 0.75 of these units to a pixel) to 40rem on a desktop (about 1.2). status.css sizes the text in
// these units per screen width, so it reads at about 12 to 14 px on both.
const W = 480;
const LEFT = 64;
const RIGHT = 12;
const ENTRIES = { heading: 18, top: 36, bottom: 150 };
const CHANGES = { heading: 184, top: 198, bottom: 262 };
const MARKS_Y = 265;
const H = 300;

/**
 * Counts as axis labels: whole up to 99,999; above, compact (124.8K, 1.2M) so they fit the margin,
 * with as many digits as it takes to tell them apart (the exact values are in the tooltips).
 */
function axisLabels(...counts: number[]): string[] {
  if (Math.max(...counts) < 100_000) return counts.map((n) => n.toLocaleString('en-US'));
  for (let digits = 2; ; digits++) {
    const format = new Intl.NumberFormat('en-US', { notation: 'compact', maximumSignificantDigits: digits });
    const labels = counts.map((n) => format.format(n));
    if (digits >= 7 || new Set(labels).size === new Set(counts).size) return labels;
  }
}
const at = (value: number) => Math.round(value * 10) / 10;
/** A time on the axis: to the minute. */
const axisTime = (value: Date) => `${formatTime(value).slice(0, 16)}Z`;

/**
 * What a sync changed in the list readers see: a held fetch was not applied, and a baseline (the
 * first load) changed nothing, though their counts say what they would have or did add.
 */
function changesOf(s: TargetSnapshotRow): number {
  return s.status !== 'ok' || s.baseline ? 0 : s.added + s.removed + s.modified + s.reappeared;
}

/** x of a time: the oldest and newest snapshot at the plot's edges (one snapshot: the middle). */
function timeScale(snapshots: readonly TargetSnapshotRow[]): (s: TargetSnapshotRow) => number {
  const times = snapshots.map((s) => new Date(s.fetched_at).getTime());
  const [first, last] = [Math.min(...times), Math.max(...times)];
  const span = last - first;
  return (s) => at(span === 0 ? (LEFT + W - RIGHT) / 2 : LEFT + ((new Date(s.fetched_at).getTime() - first) / span) * (W - LEFT - RIGHT));
}

/** y of an entry count: between the least and the most seen, each labelled, so a small change shows. */
function entryScale(counts: readonly number[]): { y: (n: number) => number; min: number; max: number } {
  const [min, max] = [Math.min(...counts), Math.max(...counts)];
  const mid = (ENTRIES.top + ENTRIES.bottom) / 2;
  return { min, max, y: (n) => at(max === min ? mid : ENTRIES.bottom - ((n - min) / (max - min)) * (ENTRIES.bottom - ENTRIES.top)) };
}

function entryLine(ok: readonly TargetSnapshotRow[], x: (s: TargetSnapshotRow) => number): SafeHtml {
  const counts = ok.map((s) => s.entry_count!);
  const { y, min, max } = entryScale(counts);
  const [minLabel, maxLabel] = axisLabels(min, max);
  const points = ok.map((s) => `${x(s)},${y(s.entry_count!)}`).join(' ');
  return html`<text class="chart-label" x="${LEFT - 6}" y="${y(max) + 4}" text-anchor="end">${maxLabel}</text>
${max === min ? '' : html`<text class="chart-label" x="${LEFT - 6}" y="${y(min) + 4}" text-anchor="end">${minLabel}</text>`}
<polyline class="chart-entries" points="${points}"/>
${ok.map((s) => html`<circle class="chart-entries-dot" cx="${x(s)}" cy="${y(s.entry_count!)}" r="2.5"><title>${formatTime(s.fetched_at)}: ${s.entry_count!.toLocaleString('en-US')} entries</title></circle>`)}`;
}

function changeBars(snapshots: readonly TargetSnapshotRow[], x: (s: TargetSnapshotRow) => number): SafeHtml {
  const max = Math.max(1, ...snapshots.map(changesOf));
  const perUnit = (CHANGES.bottom - CHANGES.top) / max;
  const width = Math.max(2.5, Math.min(12, ((W - LEFT - RIGHT) / Math.max(1, snapshots.length)) * 0.6));
  const bars = snapshots
    .filter((s) => changesOf(s) > 0)
    .map((s) => {
      let base = CHANGES.bottom;
      const parts = (['added', 'removed', 'modified', 'reappeared'] as const)
        .filter((kind) => s[kind] > 0)
        .map((kind) => {
          const h = s[kind] * perUnit;
          base -= h;
          return html`<rect class="chart-${kind}" x="${at(x(s) - width / 2)}" y="${at(base)}" width="${at(width)}" height="${at(Math.max(h, 1))}"/>`;
        });
      return html`<g><title>${formatTime(s.fetched_at)}: ${s.added} added, ${s.removed} removed, ${s.modified} modified${s.reappeared ? `, ${s.reappeared} reappeared` : ''}</title>${parts}</g>`;
    });
  return html`<text class="chart-label" x="${LEFT - 6}" y="${CHANGES.top + 4}" text-anchor="end">${axisLabels(max)[0]}</text>
<text class="chart-label" x="${LEFT - 6}" y="${CHANGES.bottom + 4}" text-anchor="end">0</text>
<line class="chart-axis" x1="${LEFT}" y1="${CHANGES.bottom}" x2="${W - RIGHT}" y2="${CHANGES.bottom}"/>
${bars}`;
}

/** Held and failed syncs: a mark on the time axis each, so a gap in the line has its reason. */
function troubleMarks(snapshots: readonly TargetSnapshotRow[], x: (s: TargetSnapshotRow) => number): SafeHtml {
  return html`${snapshots
    .filter((s) => s.status !== 'ok')
    .map(
      (s) =>
        html`<path class="chart-${s.status === 'held' ? 'held' : 'failed'}" d="M${x(s)} ${MARKS_Y} l5 10 h-10 z"><title>${formatTime(s.fetched_at)}: ${s.status}</title></path>`,
    )}`;
}

/** The chart of a target's snapshots (any order); a short note when there is nothing to draw. */
export function historyChart(snapshots: readonly TargetSnapshotRow[], caption: string): SafeHtml {
  if (snapshots.length === 0) return html`<p>Nothing synced yet.</p>`;
  const ordered = [...snapshots].sort((a, b) => new Date(a.fetched_at).getTime() - new Date(b.fetched_at).getTime() || a.id - b.id);
  const x = timeScale(ordered);
  const ok = ordered.filter((s) => s.status === 'ok' && s.entry_count !== null);
  const [first, last] = [ordered[0]!, ordered[ordered.length - 1]!];
  return html`<figure class="chart">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title" xmlns="http://www.w3.org/2000/svg">
<title id="chart-title">${caption}</title>
<text class="chart-heading" x="${LEFT}" y="${ENTRIES.heading}">entries after each ok sync</text>
${ok.length ? entryLine(ok, x) : html`<text class="chart-label" x="${LEFT}" y="${ENTRIES.bottom}">no ok sync yet</text>`}
<text class="chart-heading" x="${LEFT}" y="${CHANGES.heading}">changes per sync</text>
${changeBars(ordered, x)}
${troubleMarks(ordered, x)}
<text class="chart-label" x="${LEFT}" y="${H - 4}">${axisTime(first.fetched_at)}</text>
${ordered.length > 1 ? html`<text class="chart-label" x="${W - RIGHT}" y="${H - 4}" text-anchor="end">${axisTime(last.fetched_at)}</text>` : ''}
</svg>
<figcaption><span class="key key-added">added</span> <span class="key key-removed">removed</span> <span class="key key-modified">modified</span> <span class="key key-held">held</span> <span class="key key-failed">failed</span> · the last ${ordered.length} syncs${
    ordered.some((s) => s.baseline) ? ', the first of them the baseline (its entries are no change)' : ''
  }</figcaption>
</figure>`;
}
