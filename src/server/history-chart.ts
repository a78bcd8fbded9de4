// A list's history drawn on the server as inline SVG (no script): its entry count after each ok
// sync as a line, the changes each run made as stacked bars (added, removed, modified), and the
// syncs that were held or failed as marks on the time axis. Colours come from status.css classes:
// the page's CSP allows no inline style, and presentation attributes would ignore the dark scheme.
import { formatTime } from '../read/format-time.ts';
import type { TargetSnapshotRow } from '../read/target-history.ts';
import { html, type SafeHtml } from './html.ts';

// The drawing's own units; the SVG scales to the width of its box (a phone's 390 px included).
const W = 640;
const LEFT = 76;
const RIGHT = 12;
const ENTRIES = { heading: 22, top: 40, bottom: 130 };
const CHANGES = { heading: 162, top: 176, bottom: 236 };
const MARKS_Y = 239;
const H = 280;

const fmt = (n: number) => n.toLocaleString('en-US');
const at = (value: number) => Math.round(value * 10) / 10;

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
  const points = ok.map((s) => `${x(s)},${y(s.entry_count!)}`).join(' ');
  return html`<text class="chart-label" x="${LEFT - 6}" y="${y(max) + 4}" text-anchor="end">${fmt(max)}</text>
${max === min ? '' : html`<text class="chart-label" x="${LEFT - 6}" y="${y(min) + 4}" text-anchor="end">${fmt(min)}</text>`}
<polyline class="chart-entries" points="${points}"/>
${ok.map((s) => html`<circle class="chart-entries-dot" cx="${x(s)}" cy="${y(s.entry_count!)}" r="3"><title>${formatTime(s.fetched_at)}: ${fmt(s.entry_count!)} entries</title></circle>`)}`;
}

function changeBars(snapshots: readonly TargetSnapshotRow[], x: (s: TargetSnapshotRow) => number): SafeHtml {
  const max = Math.max(1, ...snapshots.map(changesOf));
  const perUnit = (CHANGES.bottom - CHANGES.top) / max;
  const width = Math.max(3, Math.min(14, ((W - LEFT - RIGHT) / Math.max(1, snapshots.length)) * 0.6));
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
  return html`<text class="chart-label" x="${LEFT - 6}" y="${CHANGES.top + 4}" text-anchor="end">${fmt(max)}</text>
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
        html`<path class="chart-${s.status === 'held' ? 'held' : 'failed'}" d="M${x(s)} ${MARKS_Y} l6 11 h-12 z"><title>${formatTime(s.fetched_at)}: ${s.status}</title></path>`,
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
<text class="chart-label" x="${LEFT}" y="${H - 2}">${formatTime(first.fetched_at)}</text>
${ordered.length > 1 ? html`<text class="chart-label" x="${W - RIGHT}" y="${H - 2}" text-anchor="end">${formatTime(last.fetched_at)}</text>` : ''}
</svg>
<figcaption><span class="key key-added">added</span> <span class="key key-removed">removed</span> <span class="key key-modified">modified</span> <span class="key key-held">held</span> <span class="key key-failed">failed</span> · the last ${ordered.length} syncs${
    ordered.some((s) => s.baseline) ? ', the first of them the baseline (its entries are no change)' : ''
  }</figcaption>
</figure>`;
}
