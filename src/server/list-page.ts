// The page of one list variant of one source at `list?environment=E&list=K&variant=V`: where it
// stands, what it needs (a held or failed list's reason in full and the command that resolves it),
// its history drawn (history-chart.ts), its latest changes with before → after, and its latest syncs
// with a link to each run. Plain server-rendered HTML, no script.
import type { SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import { entrySummary, fieldChanges } from '../read/field-changes.ts';
import { nextStep } from '../read/next-step.ts';
import { targetHealth } from '../read/target-health.ts';
import { targetChanges, targetSnapshots, type TargetChangeRow, type TargetKey, type TargetSnapshotRow } from '../read/target-history.ts';
import { historyChart } from './history-chart.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable, page, reason, runLink, status, time, type Column } from './page-parts.ts';

const SNAPSHOTS_SHOWN = 100;
const CHANGES_SHOWN = 50;

export interface ListPageData {
  generatedAt: Date;
  target: TargetKey;
  /** The configured source of the environment, else the environment itself. */
  source: string;
  /** Newest first; never empty. */
  snapshots: TargetSnapshotRow[];
  changes: TargetChangeRow[];
  consecutiveFailures: number;
}

/** The target named by the page's query, or undefined when the query names none. */
export function targetOf(query: URLSearchParams): TargetKey | undefined {
  const [environment, list_key, variant] = [query.get('environment'), query.get('list'), query.get('variant') ?? ''];
  return environment && list_key ? { environment, list_key, variant } : undefined;
}

/** The page's data; undefined when the target has never been synced (the page is then 404). */
export async function loadListPage(db: Queryable, configured: readonly SourceConfig[], target: TargetKey): Promise<ListPageData | undefined> {
  const [snapshots, changes, health] = await Promise.all([
    targetSnapshots(db, target, SNAPSHOTS_SHOWN),
    targetChanges(db, target, CHANGES_SHOWN),
    targetHealth(db),
  ]);
  if (!snapshots.length) return undefined;
  const mine = health.find((h) => h.environment === target.environment && h.list_key === target.list_key && h.variant === target.variant);
  return {
    generatedAt: new Date(),
    target,
    source: configured.find((s) => s.environment === target.environment)?.name ?? target.environment,
    snapshots,
    changes,
    consecutiveFailures: mine?.consecutive_failures ?? 0,
  };
}

function summary(d: ListPageData): SafeHtml {
  const latest = d.snapshots[0]!;
  const lastOk = d.snapshots.find((s) => s.status === 'ok');
  return html`<dl class="facts">
<div><dt>source</dt><dd>${d.source} <small>(environment ${d.target.environment})</small></dd></div>
${d.target.variant ? html`<div><dt>variant</dt><dd>${d.target.variant}</dd></div>` : ''}
<div><dt>status</dt><dd>${status(latest.status)} since ${time(latest.fetched_at)}</dd></div>
<div><dt>entries</dt><dd>${lastOk ? html`${lastOk.entry_count} as of the last ok sync, ${time(lastOk.fetched_at)}` : `no ok sync in the last ${d.snapshots.length}`}</dd></div>
<div><dt>failed in a row</dt><dd>${d.consecutiveFailures}</dd></div>
</dl>`;
}

/** A held or failed list: its reason in full and the command that resolves it. */
function attention(d: ListPageData): SafeHtml {
  const latest = d.snapshots[0]!;
  const step = nextStep({ list_key: d.target.list_key, status: latest.status, error_code: latest.error_code, error: latest.error });
  if (!step) return html``;
  return html`<section id="attention" class="attention">
<h2>This list ${latest.status === 'held' ? 'is held' : latest.status === 'unavailable' ? 'is unavailable' : 'failed'}</h2>
<pre class="reason">${latest.error ?? ''}</pre>
<p>${step.advice}</p>
<p><code class="command">${step.command}</code>${step.inProcess ? html` or, in process, <code class="command">${step.inProcess}</code>` : ''}</p>
</section>`;
}

function changeDetail(c: TargetChangeRow): SafeHtml {
  const fields = fieldChanges(c);
  if (fields.length) return html`<ul class="diff">${fields.map((f) => html`<li><b>${f.field}</b>: <del>${f.before}</del> → <ins>${f.after}</ins></li>`)}</ul>`;
  return html`${entrySummary(c.change === 'removed' ? c.before : c.after)}`;
}

const changeColumns: Column[] = [{ label: 'detected' }, { label: 'change' }, { label: 'code' }, { label: 'before → after', wide: true }];

function changesSection(changes: TargetChangeRow[]): SafeHtml {
  return html`<section id="changes">
<h2>Latest changes</h2>
${
  changes.length
    ? dataTable(
        changeColumns,
        changes.map((c) => ({ cells: [time(c.detected_at), status(c.change), c.code ?? c.entry_key, changeDetail(c)] })),
      )
    : html`<p>None recorded yet (a list's first sync is its baseline).</p>`
}
</section>`;
}

const syncColumns: Column[] = [
  { label: 'when' },
  { label: 'run' },
  { label: 'status' },
  { label: 'entries', num: true },
  { label: 'added', num: true },
  { label: 'removed', num: true },
  { label: 'modified', num: true },
  { label: 'reason', wide: true },
];

function syncsSection(snapshots: TargetSnapshotRow[]): SafeHtml {
  return html`<section id="syncs">
<h2>Latest syncs</h2>
${dataTable(
  syncColumns,
  snapshots.map((s) => ({
    class: s.status === 'held' ? 'held' : s.status === 'ok' ? '' : 'failed',
    cells: [time(s.fetched_at), runLink(s.run_id), status(s.status), s.entry_count, s.added, s.removed, s.modified, reason(s.error)],
  })),
)}
</section>`;
}

export function renderListPage(d: ListPageData): string {
  const name = `${d.target.list_key}${d.target.variant ? ` (${d.target.variant})` : ''}`;
  const body = html`${summary(d)}
${attention(d)}
<section id="history">
<h2>History</h2>
${historyChart(d.snapshots, `${name}: entries and changes per sync`)}
</section>
${changesSection(d.changes)}
${syncsSection(d.snapshots)}`;
  return page(`${name} · ${d.source}`, body, d.generatedAt);
}
