// The read-only status page at `/` of the worker's HTTP server: per source, every list and variant
// with its last sync; held lists with the command that accepts them; the last failures with their
// reasons; the latest changes. Plain server-rendered HTML (no script), styled by status.css.
import { recentChanges, type ChangeRow } from '../read/changes-query.ts';
import { lastRuns, type RunRow } from '../read/status-query.ts';
import { formatTime } from '../read/format-time.ts';
import type { SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import { html, type SafeHtml } from './html.ts';
import { latestTargetSyncs, recentFailures, type FailureRow, type TargetSyncRow } from '../read/status-queries.ts';
import { targetHealth } from '../read/target-health.ts';

const FAILURES_SHOWN = 20;
const CHANGES_SHOWN = 50;

export interface TargetView extends TargetSyncRow {
  held: boolean;
  held_reason: 'schema' | 'removals' | null;
  consecutive_failures: number;
}

export interface SourceView {
  name: string;
  environment: string;
  run: RunRow | undefined;
  targets: TargetView[];
}

export interface StatusPageData {
  generatedAt: Date;
  sources: SourceView[];
  failures: FailureRow[];
  changes: ChangeRow[];
}

export async function loadStatusPage(db: Queryable, configured: readonly SourceConfig[]): Promise<StatusPageData> {
  const [syncs, health, runs, failures, changes] = await Promise.all([
    latestTargetSyncs(db),
    targetHealth(db),
    lastRuns(db),
    recentFailures(db, FAILURES_SHOWN),
    recentChanges(db, { lists: null, since: null, environment: null, limit: CHANGES_SHOWN }),
  ]);
  const key = (r: { environment: string; list_key: string; variant: string }) => `${r.environment}\0${r.list_key}\0${r.variant}`;
  const healthOf = new Map(health.map((h) => [key(h), h]));
  // Configured sources first, in their order; then any source the database knows that is no longer configured.
  const sources = new Map<string, SourceView>();
  for (const s of configured) sources.set(s.environment, { name: s.name, environment: s.environment, run: undefined, targets: [] });
  for (const row of syncs) {
    let view = sources.get(row.environment);
    if (!view) sources.set(row.environment, (view = { name: row.source ?? row.environment, environment: row.environment, run: undefined, targets: [] }));
    const h = healthOf.get(key(row));
    view.targets.push({ ...row, held: h?.held ?? false, held_reason: h?.held_reason ?? null, consecutive_failures: h?.consecutive_failures ?? 0 });
  }
  for (const view of sources.values()) view.run = runs.find((r) => r.environment === view.environment);
  return { generatedAt: new Date(), sources: [...sources.values()], failures, changes };
}

/** The first line of a stored error: the one-line reason. */
function reason(text: string | null): string {
  return (text ?? '').split('\n')[0]!.slice(0, 300);
}

const time = (value: Date | null | undefined) => html`<time datetime="${value ? new Date(value).toISOString() : ''}">${formatTime(value)}</time>`;
const status = (value: string) => html`<span class="status status-${value}">${value}</span>`;

function runLine(run: RunRow | undefined): SafeHtml {
  if (!run) return html`<p class="run">No sync has run for this source yet.</p>`;
  return html`<p class="run">Last run #${run.id} (${run.trigger}) ${status(run.status)}: started ${time(run.started_at)}${
    run.finished_at ? html`, finished ${time(run.finished_at)}` : ''
  }; ${run.targets_done} of ${run.targets_total} lists done, ${run.targets_failed} not synced.${run.error ? html` <span class="reason">${reason(run.error)}</span>` : ''}</p>`;
}

function targetRow(t: TargetView): SafeHtml {
  return html`<tr class="${t.held ? 'held' : t.status === 'failed' ? 'failed' : ''}">
<td>${t.list_key}</td><td>${t.variant}</td><td>${time(t.fetched_at)}</td><td>${status(t.status)}</td>
<td class="num">${t.entries ?? ''}</td><td class="num">${t.added}</td><td class="num">${t.removed}</td><td class="num">${t.modified}</td>
<td class="num">${t.consecutive_failures || ''}</td><td>${time(t.last_ok_at)}</td><td class="reason">${reason(t.error)}</td></tr>`;
}

function sourceSection(s: SourceView): SafeHtml {
  return html`<section class="source">
<h2>Source ${s.name} <small>environment ${s.environment}</small></h2>
${runLine(s.run)}
${
  s.targets.length
    ? html`<table>
<thead><tr><th>list</th><th>variant</th><th>last sync</th><th>status</th><th>entries</th><th>added</th><th>removed</th><th>modified</th><th>failed in a row</th><th>last ok</th><th>reason</th></tr></thead>
<tbody>${s.targets.map(targetRow)}</tbody></table>`
    : ''
}
</section>`;
}

function heldSection(sources: SourceView[]): SafeHtml {
  const held = sources.flatMap((s) => s.targets.filter((t) => t.held).map((t) => ({ source: s, target: t })));
  if (!held.length) return html``;
  return html`<section id="held" class="attention">
<h2>Held lists (${held.length})</h2>
<p>A fetch would have removed too much of these lists, or changed their columns in a way their schema policy holds, so it was not applied; readers still see the last ok data.
Check the upstream, then apply the fetch on a machine with the worker's configuration (environment or <code>REFSYNC_CONFIG</code>).
The command syncs that list for every configured source and applies whatever removal it finds.</p>
<ul>${held.map(
    ({ source, target }) => html`<li><strong>${source.name}</strong> ${target.list_key}${target.variant ? html` (${target.variant})` : ''}: <span class="reason">${reason(target.error)}</span><br>
<code class="command">refsync sync --list ${target.list_key} ${target.held_reason === 'schema' ? '--accept-schema' : '--accept-removals'}</code></li>`,
  )}</ul>
</section>`;
}

function failuresSection(failures: FailureRow[]): SafeHtml {
  return html`<section id="failures">
<h2>Last failures</h2>
${
  failures.length
    ? html`<table>
<thead><tr><th>when</th><th>source</th><th>list</th><th>variant</th><th>status</th><th>code</th><th>reason</th></tr></thead>
<tbody>${failures.map(
        (f) => html`<tr><td>${time(f.fetched_at)}</td><td>${f.source ?? f.environment}</td><td>${f.list_key}</td><td>${f.variant}</td><td>${status(f.status)}</td><td>${f.error_code ?? ''}</td><td class="reason">${reason(f.error)}</td></tr>`,
      )}</tbody></table>`
    : html`<p>None recorded.</p>`
}
</section>`;
}

function changesSection(changes: ChangeRow[]): SafeHtml {
  return html`<section id="changes">
<h2>Latest changes</h2>
${
  changes.length
    ? html`<table>
<thead><tr><th>detected</th><th>environment</th><th>list</th><th>variant</th><th>change</th><th>code</th><th>description</th><th>fields</th></tr></thead>
<tbody>${changes.map(
        (c) => html`<tr><td>${time(c.detected_at)}</td><td>${c.environment}</td><td>${c.list_key}</td><td>${c.variant}</td><td>${status(c.change)}</td><td>${c.code ?? c.entry_key}</td><td>${c.description ?? ''}</td><td>${c.changed_fields?.join(', ') ?? ''}</td></tr>`,
      )}</tbody></table>`
    : html`<p>None recorded yet (a list's first sync is its baseline).</p>`
}
</section>`;
}

export function renderStatusPage(data: StatusPageData): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>refsync status</title>
<link rel="icon" href="favicon.svg">
<link rel="stylesheet" href="status.css">
</head>
<body>
<header><h1>refsync status</h1>
<p>As of ${time(data.generatedAt)} · <a href="admin/queues">queue dashboard</a> · <a href="metrics">metrics</a></p></header>
<main>
${heldSection(data.sources)}
${data.sources.length ? data.sources.map(sourceSection) : html`<p>No source is configured and nothing has synced yet.</p>`}
${failuresSection(data.failures)}
${changesSection(data.changes)}
</main>
</body>
</html>
`.text;
}
