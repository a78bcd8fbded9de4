// How an alert reads: the Standard Webhooks body, the Slack text, the one-line summary of logs and
// the CLI. Everything is built from the payload digest the pipeline wrote into the outbox.
import { cutToChars } from '../util/bounded-text.ts';

/** An outbox row as the dispatcher and the CLI read it. */
export interface AlertRecord {
  id: number;
  /** Null for run_completed, which is about a run. */
  snapshotId: number | null;
  runId: number | null;
  kind: string;
  payload: Record<string, unknown>;
  createdAt: Date;
  /** Where the retry budget starts: when it was requeued by hand, else when it was created. */
  retriesFrom: Date;
  attempts: number;
  environment: string;
  listKey: string;
  variant: string;
}

/** An alert as selected from refdata.alerts (snake_case columns). */
export interface AlertRow {
  id: number;
  snapshot_id: number | null;
  run_id: number | null;
  kind: string;
  payload: Record<string, unknown>;
  created_at: Date;
  requeued_at: Date | null;
  attempts: number;
  environment: string;
  list_key: string;
  variant: string;
}

export function alertFromRow(row: AlertRow): AlertRecord {
  return {
    id: Number(row.id),
    snapshotId: row.snapshot_id === null ? null : Number(row.snapshot_id),
    runId: row.run_id === null ? null : Number(row.run_id),
    kind: row.kind,
    payload: row.payload,
    createdAt: new Date(row.created_at),
    retriesFrom: new Date(row.requeued_at ?? row.created_at),
    attempts: row.attempts,
    environment: row.environment,
    listKey: row.list_key,
    variant: row.variant,
  };
}

interface DigestEntry {
  entry_key?: unknown;
  code?: unknown;
  description?: unknown;
}

const changeKinds = new Set(['added', 'removed', 'modified', 'reappeared']);

const emoji: Record<string, string> = {
  added: ':new:',
  removed: ':wastebasket:',
  modified: ':pencil2:',
  reappeared: ':recycle:',
  schema_changed: ':triangular_ruler:',
  nonconforming: ':jigsaw:',
  held: ':warning:',
  failed: ':x:',
  used_code_changed: ':dart:',
  run_completed: ':checkered_flag:',
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** `charge codes`, or `charge code` for one: list keys are plural snake_case nouns. */
function listNoun(listKey: string, count: number): string {
  const words = listKey.replace(/_/g, ' ');
  if (count !== 1) return words;
  if (words.endsWith('ses')) return words.slice(0, -2);
  if (words.endsWith('s')) return words.slice(0, -1);
  return words;
}

/** `(charge_codes, version 2024-06-11)`, `(carrier_package_types, carrier ups)`, `(hazmat)`. */
function context(alert: AlertRecord): string {
  if (!alert.variant) return `(${alert.listKey})`;
  const label = alert.listKey === 'charge_codes' ? 'version' : alert.listKey === 'carrier_package_types' ? 'carrier' : 'variant';
  return `(${alert.listKey}, ${label} ${alert.variant})`;
}

function entriesOf(payload: Record<string, unknown>): DigestEntry[] {
  return Array.isArray(payload.entries) ? (payload.entries as DigestEntry[]) : [];
}

interface ImpactEntry {
  column?: unknown;
  code?: unknown;
  change?: unknown;
  rows?: unknown;
}

function impactOf(payload: Record<string, unknown>): ImpactEntry[] {
  return Array.isArray(payload.impact) ? (payload.impact as ImpactEntry[]) : [];
}

/** `TON removed: 1234 rows in public.shipments.charge_code`. */
function impactLabel(i: ImpactEntry, { own, data }: Medium): string {
  return `${data(str(i.code) ?? '?')} ${own(str(i.change) ?? 'changed')}: ${num(i.rows)} rows in ${own(str(i.column) ?? '?')}`;
}

/** `SOC — Sort and segregate`: the code (or key) and the description, each upstream text. */
function entryLabel(e: DigestEntry, data: Escape): string {
  const code = data(str(e.code) ?? str(e.entry_key) ?? '?');
  const description = str(e.description);
  return description ? `${code} — ${data(description)}` : code;
}

type Escape = (text: string) => string;

/**
 * How text is written for one medium: `own` for refsync's words and the operator's labels, `data`
 * for strings that came from the upstream (codes, descriptions, field names, error bodies).
 */
interface Medium {
  own: Escape;
  data: Escape;
}

const plain: Medium = { own: (t) => t, data: (t) => t };

/** Slack's three control characters as its documented entities (docs.slack.dev, "Escaping text"). */
const slackEscape: Escape = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Upstream text as a Slack code span, where mrkdwn neither formats (`*bold*`, `~strike~`, `_it_`,
 * `:emoji:`) nor links (bare URLs, `#channel`): a backtick inside becomes U+02CB (mrkdwn has no
 * escape for it, and it would close the span) and a line break a space (a span is one line).
 */
const slackCode: Escape = (t) => (t === '' ? '' : `\`${slackEscape(t.replace(/`/g, '\u02cb').replace(/[\r\n\u2028\u2029]+/g, ' '))}\``);

const slack: Medium = { own: slackEscape, data: slackCode };

/** `2 changed, 21 unchanged, 1 held`: a run's lists counted by outcome. */
function runCounts(payload: Record<string, unknown>): string {
  const lists = Array.isArray(payload.lists) ? (payload.lists as Array<{ status?: unknown }>) : [];
  const by = new Map<string, number>();
  for (const l of lists) by.set(String(l.status), (by.get(String(l.status)) ?? 0) + 1);
  return [...by].map(([status, n]) => `${n} ${status}`).join(', ');
}

function describe(alert: AlertRecord, medium: Medium, maxEntries: number): string {
  const { own: escape, data } = medium;
  const p = alert.payload;
  if (alert.kind === 'run_completed') {
    const counts = runCounts(p);
    return `run ${num(p.run_id)} of ${escape(str(p.source) ?? alert.environment)} (${escape(alert.environment)}) ${escape(str(p.status) ?? 'finished')}: ${num(p.targets_done)} of ${num(p.targets_total)} lists${counts ? ` (${escape(counts)})` : ''}`;
  }
  const where = `in ${escape(alert.environment)} ${escape(context(alert))}`;
  if (changeKinds.has(alert.kind)) {
    const count = num(p.count);
    const entries = entriesOf(p);
    const shown = entries.slice(0, maxEntries).map((e) => entryLabel(e, data));
    const more = count - shown.length;
    const list = shown.join('; ') + (more > 0 ? `${shown.length ? '; ' : ''}and ${more} more` : '');
    return `${count} ${listNoun(alert.listKey, count)} ${alert.kind} ${where}${list ? `: ${list}` : ''}`;
  }
  const noun = listNoun(alert.listKey, 2);
  if (alert.kind === 'held') {
    return `${noun} update held ${where}: ${escape(str(p.message) ?? 'the fetch would remove too many entries')}`;
  }
  if (alert.kind === 'failed') {
    const what = p.status === 'unavailable' ? 'unavailable' : 'failed to sync';
    return `${noun} ${what} ${where}: ${str(p.error) !== undefined ? data(str(p.error)!) : escape(str(p.error_code) ?? 'unknown error')}`;
  }
  if (alert.kind === 'used_code_changed') {
    const impact = impactOf(p);
    const shown = impact.slice(0, maxEntries).map((i) => impactLabel(i, medium));
    const more = impact.length - shown.length + num(p.more);
    const count = num(p.count);
    return `${count} ${listNoun(alert.listKey, count)} in use changed ${where}: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
  }
  if (alert.kind === 'nonconforming') {
    const count = num(p.count);
    const shown = misfitsOf(p)
      .slice(0, maxEntries)
      .map((m) => escape(misfitLabel(m)));
    const more = count - shown.length;
    return `${count} ${count === 1 ? 'value' : 'values'} of ${noun} not fitting their column's type ${where}: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
  }
  if (alert.kind === 'schema_changed') {
    const added = Array.isArray(p.fields_added) ? (p.fields_added as unknown[]).map(String) : [];
    const removed = Array.isArray(p.fields_removed) ? (p.fields_removed as unknown[]).map(String) : [];
    const parts = [];
    if (added.length) parts.push(`fields added: ${added.map(data).join(', ')}`);
    if (removed.length) parts.push(`fields removed: ${removed.map(data).join(', ')}`);
    const columns = columnChanges(p);
    if (columns.length) parts.push(`view columns: ${columns.map(data).join(', ')}`);
    if (num(p.reshaped) > 0) parts.push(`${num(p.reshaped)} entries reshaped (not counted as modified)`);
    const waiting = p.views_waiting as { message?: unknown } | undefined;
    if (waiting && str(waiting.message)) parts.push(escape(str(waiting.message)!));
    if (Array.isArray(p.applied_after_wait))
      parts.push(`applied after waiting for the views' dependents: ${escape(columnChanges({ columns: p.applied_after_wait }).join(', '))}`);
    return `${noun} changed shape ${where}${parts.length ? `: ${parts.join('; ')}` : ''}`;
  }
  return `${escape(alert.kind)} ${where}`;
}

interface Misfit {
  entry_key?: unknown;
  code?: unknown;
  column?: unknown;
  value?: unknown;
}

function misfitsOf(payload: Record<string, unknown>): Misfit[] {
  return Array.isArray(payload.entries) ? (payload.entries as Misfit[]) : [];
}

/** `53FT length_ft "26-28"`: the entry, the column and the value as served. */
function misfitLabel(m: Misfit): string {
  return `${str(m.code) ?? str(m.entry_key) ?? '?'} ${str(m.column) ?? '?'} ${JSON.stringify(m.value ?? null)}`;
}

/** The typed view columns a schema_changed alert reports: `+name type` added, `name from→to` widened. */
function columnChanges(p: Record<string, unknown>): string[] {
  if (!Array.isArray(p.columns)) return [];
  return (p.columns as Array<Record<string, unknown>>).map((c) =>
    c.change === 'widened' ? `${String(c.column)} ${String(c.from)}→${String(c.to)}` : `+${String(c.column)} ${String(c.to)}`,
  );
}

/** One readable line for logs and the CLI, without markup. */
export function alertText(alert: AlertRecord, maxEntries = 10): string {
  return describe(alert, plain, maxEntries);
}

const SLACK_TEXT_LIMIT = 3000;

/** The Slack incoming-webhook body: readable text with the kind's emoji. */
export function slackBody(alert: AlertRecord): string {
  const text = cutToChars(`${emoji[alert.kind] ?? ':bell:'} ${describe(alert, slack, 50)}`, SLACK_TEXT_LIMIT);
  // No link previews either: a URL an upstream string carries is never fetched by Slack.
  return JSON.stringify({ text, unfurl_links: false, unfurl_media: false });
}

/** The Standard Webhooks body: event type, the time the event was recorded, the digest. */
export function standardBody(alert: AlertRecord): string {
  return JSON.stringify({ type: `refdata.${alert.kind}`, timestamp: alert.createdAt.toISOString(), data: alert.payload });
}

/** How many codes an alert's log line names: a handful, the rest only counted. */
const LOG_CODES = 5;
const LOG_TEXT_LIMIT = 300;

/**
 * The fields of an alert's log line: what happened (kind, list, counts) and the first few codes,
 * never the digest. A log is read by people scanning stderr; the digest stays in the outbox,
 * `refsync alerts` and the webhook.
 */
export function logFields(alert: AlertRecord): Record<string, unknown> {
  const p = alert.payload;
  const counts = Object.fromEntries(Object.entries(p).filter(([k, v]) => typeof v === 'number' && k !== 'snapshot_id' && k !== 'run_id'));
  const codes = changeKinds.has(alert.kind)
    ? entriesOf(p)
        .slice(0, LOG_CODES)
        .map((e) => str(e.code) ?? str(e.entry_key) ?? '?')
    : undefined;
  return { ...counts, ...(codes ? { codes } : {}) };
}

/** The message of an alert's log line: the one-line text with a handful of codes, bounded. */
export function logText(alert: AlertRecord): string {
  const text = alertText(alert, LOG_CODES);
  return text.length > LOG_TEXT_LIMIT ? `${text.slice(0, LOG_TEXT_LIMIT - 1)}…` : text;
}

/** A short summary for the CLI's table: the first codes of a change, or what went wrong. */
export function shortSummary(alert: AlertRecord, maxCodes = 5): string {
  const p = alert.payload;
  if (changeKinds.has(alert.kind)) {
    const codes = entriesOf(p)
      .slice(0, maxCodes)
      .map((e) => str(e.code) ?? str(e.entry_key) ?? '?');
    const more = num(p.count) - codes.length;
    return codes.join(', ') + (more > 0 ? ` +${more} more` : '');
  }
  if (alert.kind === 'failed') return str(p.error_code) ?? str(p.status) ?? '';
  if (alert.kind === 'used_code_changed') {
    return impactOf(p)
      .slice(0, maxCodes)
      .map((i) => `${str(i.code) ?? '?'} (${num(i.rows)} rows)`)
      .join(', ');
  }
  if (alert.kind === 'nonconforming') {
    return misfitsOf(p)
      .slice(0, maxCodes)
      .map((m) => `${str(m.code) ?? str(m.entry_key) ?? '?'}.${str(m.column) ?? '?'}`)
      .join(', ');
  }
  if (alert.kind === 'held' && p.reason === 'schema') {
    const diff = Array.isArray(p.schema_diff) ? (p.schema_diff as Array<Record<string, unknown>>) : [];
    return `schema: ${diff.map((c) => `${String(c.column)} ${c.change === 'widened' ? `${String(c.from)}→${String(c.to)}` : String(c.change)}`).join(', ')}`;
  }
  if (alert.kind === 'held') return `would remove ${num(p.would_remove)} of ${num(p.current_count)}`;
  if (alert.kind === 'run_completed') return `run ${num(p.run_id)} ${str(p.status) ?? ''}: ${runCounts(p)}`;
  if (alert.kind === 'schema_changed') {
    const added = Array.isArray(p.fields_added) ? (p.fields_added as unknown[]).map((f) => `+${String(f)}`) : [];
    const removed = Array.isArray(p.fields_removed) ? (p.fields_removed as unknown[]).map((f) => `-${String(f)}`) : [];
    return [...added, ...removed].join(' ');
  }
  return '';
}
