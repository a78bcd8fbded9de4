// The read-only status page at `/` of the worker's HTTP server: per source, every list and variant
// with its last sync; held lists with the command that accepts them; the lists failing now, once per
// cause (failures-section.ts); the latest changes; failures since recovered, folded. Each list links to its own page (list-page.ts), each run to its run
// page (run-page.ts). Plain server-rendered HTML (no script), styled by status.css.
import { recentChanges, type ChangeRow } from '../read/changes-query.ts';
import { lastRuns, type RunRow } from '../read/status-query.ts';
import type { SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import { html, type SafeHtml } from './html.ts';
import { latestTargetSyncs, recoveredFailures, type FailureRow, type TargetSyncRow } from '../read/status-queries.ts';
import { failingSection, isFailing, reasonCell, recoveredSection, sharedCauses } from './failures-section.ts';
import { targetHealth } from '../read/target-health.ts';
import { nextStep } from '../read/next-step.ts';
import { readFeedHoldback, type FeedHoldback } from '../read/change-feed-holdback.ts';
import { feedHoldbackSection } from './feed-holdback-section.ts';
import { dataTable, listLink, page, reason, runLink, status, time, type Column } from './page-parts.ts';
import { SCHEMA_HELD } from '../util/error-codes.ts';

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
  /** Failures of lists that have synced since. */
  recovered: FailureRow[];
  changes: ChangeRow[];
  /** Who holds the change feed back; null when Postgres could not say (the page still shows the rest). */
  feedHoldback: FeedHoldback | null;
}

export async function loadStatusPage(db: Queryable, configured: readonly SourceConfig[]): Promise<StatusPageData> {
  const [syncs, health, runs, recovered, changes, feedHoldback] = await Promise.all([
    latestTargetSyncs(db),
    targetHealth(db),
    lastRuns(db),
    recoveredFailures(db, FAILURES_SHOWN),
    recentChanges(db, { lists: null, since: null, environment: null, limit: CHANGES_SHOWN }),
    readFeedHoldback(db).catch(() => null),
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
  return { generatedAt: new Date(), sources: [...sources.values()], recovered, changes, feedHoldback };
}

/**
 * The source's last run. While some of its lists fail, their reasons are under "Failing now", once
 * per cause, so the run's error (every list's reason, one after the other) is not repeated here.
 */
function runLine(run: RunRow | undefined, failing: boolean): SafeHtml {
  if (!run) return html`<p class="run">No sync has run for this source yet.</p>`;
  const error = failing ? html` Why: under Failing now, above.` : run.error ? html` <span class="reason">${reason(run.error)}</span>` : '';
  return html`<p class="run">Last run ${runLink(run.id)} (${run.trigger}) ${status(run.status)}: started ${time(run.started_at)}${
    run.finished_at ? html`, finished ${time(run.finished_at)}` : ''
  }; ${run.targets_done} of ${run.targets_total} lists done, ${run.targets_failed} not synced.${error}</p>`;
}

const targetColumns: Column[] = [
  { label: 'list', whole: true },
  { label: 'variant', whole: true },
  { label: 'last sync' },
  { label: 'status' },
  { label: 'entries', num: true },
  { label: 'added', num: true },
  { label: 'removed', num: true },
  { label: 'modified', num: true },
  { label: 'failed in a row', num: true },
  { label: 'last ok' },
  { label: 'reason', wide: true },
  { label: 'impact error', wide: true },
];

/** `sharedBy`: how many failing lists share this one's cause (failures-section.ts). */
function targetRow(t: TargetView, sharedBy: number) {
  return {
    class: t.held ? 'held' : t.status === 'failed' || t.status === 'unavailable' ? 'failed' : '',
    cells: [
      listLink(t),
      t.variant,
      time(t.fetched_at),
      status(t.status),
      t.entries,
      t.added,
      t.removed,
      t.modified,
      t.consecutive_failures || '',
      time(t.last_ok_at),
      reasonCell(t.error, sharedBy),
      reason(t.impact_error),
    ],
  };
}

function sourceSection(s: SourceView, sharedBy: (t: TargetView) => number): SafeHtml {
  return html`<section class="source">
<h2>Source ${s.name} <small>environment ${s.environment}</small></h2>
${runLine(s.run, s.targets.some(isFailing))}
${
  s.targets.length
    ? dataTable(
        targetColumns,
        s.targets.map((t) => targetRow(t, sharedBy(t))),
      )
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
Check the upstream (and, for a schema change, the views built on the list), then apply the fetch on a machine with the worker's configuration (environment or <code>REFSYNC_CONFIG</code>) with the command shown.</p>
<ul>${held.map(
    ({
      source,
      target,
    }) => html`<li><strong>${source.name}</strong> ${listLink(target)}${target.variant ? html` (${target.variant})` : ''}: <span class="reason">${reason(target.error)}</span><br>
<code class="command">${nextStep({ list_key: target.list_key, status: 'held', error_code: target.held_reason === 'schema' ? SCHEMA_HELD : null, error: target.error ?? null })!.command}</code></li>`,
  )}</ul>
</section>`;
}

const changeColumns: Column[] = [
  { label: 'detected' },
  { label: 'environment' },
  { label: 'list', whole: true },
  { label: 'variant', whole: true },
  { label: 'change' },
  { label: 'code' },
  { label: 'description', wide: true },
  { label: 'fields' },
];

function changesSection(changes: ChangeRow[]): SafeHtml {
  return html`<section id="changes">
<h2>Latest changes</h2>
${
  changes.length
    ? dataTable(
        changeColumns,
        changes.map((c) => ({
          cells: [
            time(c.detected_at),
            c.environment,
            listLink(c),
            c.variant,
            status(c.change),
            c.code ?? c.entry_key,
            c.description ?? '',
            c.changed_fields?.join(', ') ?? '',
          ],
        })),
      )
    : html`<p>None recorded yet (a list's first sync is its baseline).</p>`
}
</section>`;
}

/** `signedIn`: the page is behind the dashboard's login, so it may name the session holding the feed. */
export function renderStatusPage(data: StatusPageData, signedIn = false): string {
  const failing = data.sources.flatMap((s) => s.targets.filter(isFailing).map((t) => ({ ...t, source_name: s.name })));
  const sharedBy = sharedCauses(failing);
  const body = html`${feedHoldbackSection(data.feedHoldback, signedIn)}
${heldSection(data.sources)}
${failingSection(failing)}
${data.sources.length ? data.sources.map((s) => sourceSection(s, sharedBy)) : html`<p>No source is configured and nothing has synced yet.</p>`}
${changesSection(data.changes)}
${recoveredSection(data.recovered, FAILURES_SHOWN)}`;
  return page('refsync status', body, data.generatedAt);
}
