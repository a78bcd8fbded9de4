// `refsync status --list KEY [--source NAME]`: one list in detail, per source and variant: its
// state, the held or failed reason in full with the command that resolves it, its last snapshots,
// and its last changes with the changed fields before → after.
import { formatAge } from '../../read/format-age.ts';
import { formatTime } from '../../read/format-time.ts';
import { lastChanges, lastSnapshots, listTargets, type ChangeDetail, type ListTargetRow, type SnapshotDetail } from '../../read/list-detail.ts';
import { nextStep } from '../../read/next-step.ts';
import type { Queryable } from '../../db/database.ts';
import { formatTable } from '../output/table.ts';
import { cellText, jsonText, shorten, terminalText } from '../output/terminal.ts';
import { briefReason } from './status-lines.ts';

const SNAPSHOTS_SHOWN = 10;
const CHANGES_SHOWN = 20;

export interface ListDetail extends ListTargetRow {
  resolve: string | null;
  snapshots: SnapshotDetail[];
  changes: ChangeDetail[];
}

export async function listDetail(q: Queryable, listKey: string, source: string | null): Promise<ListDetail[]> {
  const targets = await listTargets(q, listKey, source);
  return Promise.all(
    targets.map(async (t) => ({
      ...t,
      // In a terminal the in-process command is the one at hand; the worker's trigger is the other way.
      resolve: ((step) => (step ? (step.inProcess ?? step.command) : null))(nextStep(t)),
      snapshots: await lastSnapshots(q, t, SNAPSHOTS_SHOWN),
      changes: await lastChanges(q, t, CHANGES_SHOWN),
    })),
  );
}

/** A field's value as the change table shows it: a string exactly (quoted when it must be), anything else as JSON. */
function fieldValue(value: unknown): string {
  if (value === undefined) return '(none)';
  return typeof value === 'string' ? cellText(value) : terminalText(JSON.stringify(value));
}

/** What a change did to the entry, one line each: every changed field before → after, or the entry's description. */
function changeLines(c: ChangeDetail): string[] {
  if (c.changed_fields?.length) return c.changed_fields.map((f) => `${terminalText(f)}: ${fieldValue(c.before?.[f])} → ${fieldValue(c.after?.[f])}`);
  const entry = (c.after ?? c.before ?? {}) as Record<string, unknown>;
  const description = entry.description ?? entry.name;
  return description === undefined ? [] : [`${entry.description === undefined ? 'name' : 'description'}: ${fieldValue(description)}`];
}

/** `  label  value`, the value wrapped at spaces under itself so that no line passes `width`. */
function field(label: string, value: string, width: number | undefined): string[] {
  const prefix = `  ${label.padEnd(12)} `;
  const room = width ? Math.max(width - prefix.length, 20) : Infinity;
  const lines: string[] = [];
  let line = '';
  for (const word of value.split(' ')) {
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines.map((l, i) => (i === 0 ? prefix : ' '.repeat(prefix.length)) + l);
}

function stateLines(t: ListDetail, width: number | undefined, now: Date): string[] {
  const when = (d: Date | null) => (d ? `${formatAge(d, now)} (${formatTime(d)})` : 'never');
  const code = t.error_code && t.error_code !== t.status ? ` (${t.error_code})` : '';
  const failures = t.consecutive_failures ? `, failed ${t.consecutive_failures} in a row` : '';
  return [
    terminalText(`${t.list_key}${t.variant ? ` ${t.variant}` : ''}: source ${t.source || '?'}, environment ${t.environment}`),
    ...field('status', `${t.status}${code}, fetched ${when(t.fetched_at)}${failures}`, width),
    ...field('entries', `${t.current_entries} current`, width),
    ...field('last ok', when(t.last_ok_at), width),
    ...field('last change', when(t.last_change_at), width),
    ...(t.error ? field('reason', terminalText(t.error), width) : []),
    ...(t.resolve ? field('resolve', t.resolve, width) : []),
  ];
}

/** The last snapshots as a table, each error shortened to the room the other columns leave. */
function snapshotLines(t: ListDetail, width: number | undefined): string[] {
  const headers = ['fetched', 'status', 'entries', 'changes', 'error'];
  const rows = (room: number) =>
    t.snapshots.map((s) => [
      formatTime(s.fetched_at),
      s.status,
      s.entry_count as number | null,
      `+${s.added} -${s.removed} ~${s.modified}`,
      s.error === null ? null : shorten(briefReason(s.error), room),
    ]);
  const errorAt = formatTable(headers, rows(0)).indexOf('error');
  const table = formatTable(headers, rows(width ? Math.max(width - 2 - errorAt, 10) : Infinity));
  return [`  last snapshots (newest first, at most ${SNAPSHOTS_SHOWN})`, ...table.split('\n').map((l) => (width ? shorten(`  ${l}`, width) : `  ${l}`))];
}

/** The last changes: a line per change, and under it a line per changed field (wrapped, never cut). */
function changeBlock(t: ListDetail, width: number | undefined): string[] {
  if (t.changes.length === 0) return ['  no changes recorded (a first sync is its baseline)'];
  const lines = [`  last changes (newest first, at most ${CHANGES_SHOWN})`];
  for (const c of t.changes) {
    lines.push(`  ${formatTime(c.detected_at)}  ${c.change.padEnd(10)} ${cellText(c.code ?? c.entry_key)}`);
    for (const field of changeLines(c)) lines.push(...fold(`      ${field}`, width));
  }
  return lines;
}

/**
 * `line` cut into pieces of at most `width` characters, continuations indented under it. Cut at
 * any character, not at spaces, so every space of a value stays where it was.
 */
function fold(line: string, width: number | undefined): string[] {
  if (!width || line.length <= width) return [line];
  const indent = `${/^\s*/.exec(line)![0]}  `;
  const room = Math.max(width - indent.length, 10);
  const pieces = [line.slice(0, width)];
  for (let at = width; at < line.length; at += room) pieces.push(indent + line.slice(at, at + room));
  return pieces;
}

function targetBlock(t: ListDetail, width: number | undefined, now: Date): string {
  return [...stateLines(t, width, now), '', ...snapshotLines(t, width), '', ...changeBlock(t, width)].join('\n');
}

/** Prints the detail of `listKey`; `source` narrows it to one source (its name or environment). */
export async function printListDetail(q: Queryable, listKey: string, source: string | null, json: boolean, width: number | undefined): Promise<number> {
  const details = await listDetail(q, listKey, source);
  if (json) {
    process.stdout.write(`${jsonText({ list_key: listKey, source, targets: details })}\n`);
    return 0;
  }
  if (details.length === 0) {
    process.stdout.write(`no sync of ${listKey}${source ? ` for source ${terminalText(source)}` : ''} is recorded yet\n`);
    return 0;
  }
  const now = new Date();
  process.stdout.write(`${details.map((t) => targetBlock(t, width, now)).join('\n\n')}\n`);
  return 0;
}
