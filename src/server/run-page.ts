// The page of one run at `run?id=N`: when and why it ran, how it ended, and each target's outcome
// (status, counts, reason) with a link to the list's page. Plain server-rendered HTML, no script.
import type { SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import { runById, runTargets, type RunTargetRow } from '../read/run-detail.ts';
import type { RunRow } from '../read/status-query.ts';
import { statedInRunError } from '../read/run-reason.ts';
import { groupAlike } from '../util/alike.ts';
import { causeOf } from '../util/failure-cause.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable, listLink, page, reason, status, time, type Column } from './page-parts.ts';

export interface RunPageData {
  generatedAt: Date;
  run: RunRow;
  /** The configured source of the run, else the name it recorded. */
  source: string;
  targets: RunTargetRow[];
}

/** The run id the page's query names, or undefined when it names none. */
export function runIdOf(query: URLSearchParams): number | undefined {
  const id = query.get('id') ?? '';
  return /^[1-9]\d{0,14}$/.test(id) ? Number(id) : undefined;
}

/** The page's data; undefined when there is no such run (the page is then 404). */
export async function loadRunPage(db: Queryable, configured: readonly SourceConfig[], id: number): Promise<RunPageData | undefined> {
  const [run, targets] = await Promise.all([runById(db, id), runTargets(db, id)]);
  if (!run) return undefined;
  const source = configured.find((s) => s.name === run.source)?.name ?? (run.source || run.environment);
  return { generatedAt: new Date(), run, source, targets };
}

function seconds(ms: number | null): string {
  return ms === null ? '' : `${(ms / 1000).toFixed(1)} s`;
}

function summary(d: RunPageData): SafeHtml {
  const r = d.run;
  const recorded = d.targets.length;
  return html`<dl class="facts">
<div><dt>source</dt><dd>${d.source} <small>(environment ${r.environment})</small></dd></div>
<div><dt>trigger</dt><dd>${r.trigger}</dd></div>
<div><dt>status</dt><dd>${status(r.status)}</dd></div>
<div><dt>started</dt><dd>${time(r.started_at)}</dd></div>
<div><dt>finished</dt><dd>${r.finished_at ? html`${time(r.finished_at)} (${seconds(new Date(r.finished_at).getTime() - new Date(r.started_at).getTime())})` : 'not yet'}</dd></div>
<div><dt>lists</dt><dd>${r.targets_done} of ${r.targets_total} done, ${r.targets_failed} not synced${recorded < r.targets_total ? `; ${r.targets_total - recorded} without an outcome recorded yet` : ''}</dd></div>
</dl>
${r.error ? html`<section id="run-error" class="attention"><h2>Run error</h2><pre class="reason">${r.error}</pre></section>` : ''}`;
}

const targetColumns: Column[] = [
  { label: 'list', whole: true },
  { label: 'variant', whole: true },
  { label: 'status' },
  { label: 'entries', num: true },
  { label: 'added', num: true },
  { label: 'removed', num: true },
  { label: 'modified', num: true },
  { label: 'took', num: true },
  { label: 'reason', wide: true },
];

/**
 * The targets whose failure several share and the run's error states once (run-error.ts): their
 * rows point to it instead of each repeating the reason.
 */
function sharedWithRun(d: RunPageData): Set<RunTargetRow> {
  const shared = new Set<RunTargetRow>();
  const failed = d.targets.filter((t) => t.status !== 'ok' && t.error);
  for (const group of groupAlike(failed, (t) => [t.status, causeOf(reason(t.error), t.error_code)])) {
    if (group.length > 1 && statedInRunError(d.run.error, group[0]!.error)) for (const t of group) shared.add(t);
  }
  return shared;
}

function targetRow(d: RunPageData, t: RunTargetRow, withVariant: boolean, shared: boolean) {
  return {
    class: t.status === 'held' ? 'held' : t.status === 'ok' ? '' : 'failed',
    cells: [
      listLink({ environment: d.run.environment, list_key: t.list_key, variant: t.variant }),
      ...(withVariant ? [t.variant] : []),
      status(t.status),
      t.entry_count,
      t.added,
      t.removed,
      t.modified,
      seconds(t.duration_ms),
      shared ? html`<a href="#run-error">see Run error</a>` : reason(t.error),
    ],
  };
}

/** The outcomes; the variant column only when a list of the run has variants. */
function targetTable(d: RunPageData): SafeHtml {
  const withVariant = d.targets.some((t) => t.variant !== '');
  const columns = withVariant ? targetColumns : targetColumns.filter((c) => c.label !== 'variant');
  const shared = sharedWithRun(d);
  return dataTable(
    columns,
    d.targets.map((t) => targetRow(d, t, withVariant, shared.has(t))),
  );
}

export function renderRunPage(d: RunPageData): string {
  const body = html`${summary(d)}
<section id="targets">
<h2>Each list's outcome</h2>
${d.targets.length ? targetTable(d) : html`<p>No list has an outcome recorded in this run yet.</p>`}
</section>`;
  return page(`Run #${d.run.id} · ${d.source}`, body, d.generatedAt);
}
