// The failures on the status page at `/`. What is failing now comes first, once per cause: every
// list stopped by one untrusted certificate is one row naming them, not a row per list. Failures of
// lists that have synced since need nobody, so they wait a click away, folded.
import type { FailureRow, TargetSyncRow } from '../read/status-queries.ts';
import { groupAlike } from '../util/alike.ts';
import { causeOf, sharedMessage } from '../util/failure-cause.ts';
import { html, type SafeHtml } from './html.ts';
import { dataTable, listLink, reason, status, time, type Column } from './page-parts.ts';

/** A target whose latest snapshot failed, with the name of its source. */
export type FailingTarget = TargetSyncRow & { source_name: string };

export function isFailing(t: { status: string }): boolean {
  return t.status === 'failed' || t.status === 'unavailable';
}

const failingColumns: Column[] = [{ label: 'lists' }, { label: 'source' }, { label: 'status' }, { label: 'last tried' }, { label: 'reason', wide: true }];

/** The failing targets by source, status and reason, in the order first met. */
function byCause(failing: readonly FailingTarget[]): FailingTarget[][] {
  return groupAlike(failing, (t) => [t.environment, t.status, causeOf(reason(t.error), t.error_code)]);
}

const targetKey = (t: { environment: string; list_key: string; variant: string }) => JSON.stringify([t.environment, t.list_key, t.variant]);

/**
 * How many failing lists share each failing target's cause, for the source tables: a list whose
 * cause it shares with others points to its row in "Failing now" instead of repeating the reason.
 */
export function sharedCauses(failing: readonly FailingTarget[]): (t: { environment: string; list_key: string; variant: string }) => number {
  const sizes = new Map<string, number>();
  for (const group of byCause(failing)) for (const t of group) sizes.set(targetKey(t), group.length);
  return (t) => sizes.get(targetKey(t)) ?? 0;
}

/** A failing target's reason in its source's table: its own, or a pointer to the cause it shares. */
export function reasonCell(error: string | null, sharedBy: number): SafeHtml | string {
  if (sharedBy < 2) return reason(error);
  return html`<a href="#failing">see Failing now</a>`;
}

function listsCell(group: readonly FailingTarget[]): SafeHtml {
  const links = group.map((t, i) => html`${i ? ', ' : ''}${listLink(t, t.variant ? `${t.list_key} ${t.variant}` : t.list_key)}`);
  return group.length === 1 ? html`${links}` : html`${group.length} lists: ${links}`;
}

export function failingSection(failing: readonly FailingTarget[]): SafeHtml {
  if (!failing.length) return html``;
  const rows = byCause(failing).map((group) => {
    const latest = group.reduce((a, b) => (new Date(b.fetched_at) > new Date(a.fetched_at) ? b : a));
    return {
      class: 'failed',
      cells: [listsCell(group), group[0]!.source_name, status(group[0]!.status), time(latest.fetched_at), sharedMessage(group.map((t) => reason(t.error)))],
    };
  });
  return html`<section id="failing" class="attention">
<h2>Failing now (${failing.length} ${failing.length === 1 ? 'list' : 'lists'})</h2>
<p>Readers still see each list's last ok data. Lists that fail for the same reason share a row: fix the cause once.</p>
${dataTable(failingColumns, rows)}
</section>`;
}

const recoveredColumns: Column[] = [
  { label: 'when' },
  { label: 'source' },
  { label: 'list' },
  { label: 'variant' },
  { label: 'status' },
  { label: 'code' },
  { label: 'reason', wide: true },
];

/** `limit`: the most the query returned; a full page says it shows the latest only. */
export function recoveredSection(failures: readonly FailureRow[], limit: number): SafeHtml {
  if (!failures.length) return html``;
  const count = failures.length < limit ? `${failures.length}` : `the latest ${limit}`;
  const rows = failures.map((f) => ({
    cells: [time(f.fetched_at), f.source ?? f.environment, listLink(f), f.variant, status(f.status), f.error_code ?? '', reason(f.error)],
  }));
  return html`<section id="failures">
<details><summary>Earlier failures (${count}), of lists that have synced since</summary>
${dataTable(recoveredColumns, rows)}
</details>
</section>`;
}
