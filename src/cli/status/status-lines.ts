// The targets of `refsync status` as text: one line per target, whatever the width. Columns are
// kept by importance (list, status, last fetch, then the reason, entries, last change, last ok)
// and the reason of a held or failed list is shortened to the room left, so at 80 columns and
// wider no line wraps. Without a width (a pipe) every column is kept and nothing is shortened.
import type { RunRow, TargetStatusRow } from '../../read/status-query.ts';
import { formatAge } from '../../read/format-age.ts';
import { statedInRunError } from '../../read/run-reason.ts';
import { shorten, terminalText } from '../output/terminal.ts';
import { groupAlike } from '../../util/alike.ts';
import { causeOf } from '../../util/failure-cause.ts';
import { wrap } from '../output/wrap.ts';

interface Column {
  header: string;
  /** Lower is kept longer; 0 is never dropped. */
  rank: number;
  right?: boolean;
  cell(t: TargetStatusRow, now: Date): string;
}

/** Fewest characters of a reason worth showing: below this, lower columns make room for it. */
const REASON_MIN = 30;

/**
 * The first line of a stored error, safe for the terminal, for a line that names the list already:
 * without the request it concerns (`GET /v2/shipments/hazmat/ page 3: `), which the detail keeps.
 */
export function briefReason(error: string | null): string {
  const first = (error ?? '').split('\n')[0]!.trim();
  return terminalText(first.replace(/^(GET|POST) \/\S* (page \d+: )?/, '').replace(/^: /, ''));
}

const columns: Column[] = [
  { header: 'list', rank: 0, cell: (t) => terminalText(t.variant ? `${t.list_key} ${t.variant}` : t.list_key) },
  { header: 'status', rank: 0, cell: (t) => t.last_status },
  { header: 'fetched', rank: 1, cell: (t, now) => formatAge(t.last_fetched_at, now) },
  { header: 'entries', rank: 3, right: true, cell: (t) => String(t.current_entries) },
  { header: 'changed', rank: 4, cell: (t, now) => formatAge(t.last_change_at, now) },
  {
    header: 'last ok',
    rank: 5,
    // Only when it differs from the last fetch: a list that synced ok would repeat it.
    cell: (t, now) =>
      t.last_success_at && new Date(t.last_success_at).getTime() === new Date(t.last_fetched_at).getTime() ? '' : formatAge(t.last_success_at, now) || 'never',
  },
];

const SEP = '  ';

/** What a list's row says for a reason that the run's line above already gives once for several lists. */
export const RUN_REASON = "the run's reason, above";

/**
 * Each target's reason; a failure that several lists share and the run's error (the line above the
 * table) states is said there once, not again on every row.
 */
function reasonsOf(targets: TargetStatusRow[], runError: string | null | undefined): string[] {
  const firstLine = (t: TargetStatusRow) => (t.last_error ?? '').split('\n')[0]!;
  const sharedByRun = new Set<TargetStatusRow>();
  for (const group of groupAlike(
    targets.filter((t) => t.last_error && t.last_status !== 'ok'),
    (t) => [t.last_status, causeOf(firstLine(t), t.last_error_code)],
  )) {
    if (group.length > 1 && statedInRunError(runError, group[0]!.last_error)) for (const t of group) sharedByRun.add(t);
  }
  // A list that synced but whose impact on the usage columns could not be read says so too.
  return targets.map((t) =>
    sharedByRun.has(t) ? RUN_REASON : t.last_error ? briefReason(t.last_error) : t.impact_error ? `impact: ${briefReason(t.impact_error)}` : '',
  );
}

/** The table of `targets`: a header and one line each, every line at most `width` when given. `runError`: the error of the run shown above it. */
export function targetLines(targets: TargetStatusRow[], width: number | undefined, now: Date, runError?: string | null): string[] {
  const reasons = reasonsOf(targets, runError);
  const longestReason = Math.max(0, ...reasons.map((r) => r.length));
  // A column with nothing in it (no list failed since its last ok sync) says nothing: left out.
  let kept = columns.map((c) => ({ ...c, cells: targets.map((t) => c.cell(t, now)) })).filter((c) => c.rank === 0 || c.cells.some(Boolean));
  const widthOf = (c: (typeof kept)[number]) => Math.max(c.header.length, ...c.cells.map((s) => s.length));
  const fixed = () => kept.reduce((sum, c) => sum + widthOf(c) + SEP.length, 0);
  const reasonRoom = Math.min(REASON_MIN, longestReason);
  if (width !== undefined) {
    while (fixed() + reasonRoom > width && kept.some((c) => c.rank > 1)) {
      const drop = kept.reduce((a, c) => (c.rank > a.rank ? c : a));
      kept = kept.filter((c) => c !== drop);
    }
  }
  const reasonWidth = width === undefined ? longestReason : Math.max(width - fixed(), 0);
  const line = (cells: string[], reason: string) => {
    const text = kept.map((c, i) => (c.right ? cells[i]!.padStart(widthOf(c)) : cells[i]!.padEnd(widthOf(c)))).join(SEP);
    const withReason = longestReason > 0 ? `${text}${SEP}${shorten(reason, reasonWidth)}` : text;
    const trimmed = withReason.trimEnd();
    // The list names of a very narrow terminal are the last resort: no line may wrap.
    return width === undefined ? trimmed : shorten(trimmed, width);
  };
  return [
    line(
      kept.map((c) => c.header),
      longestReason > 0 ? 'reason' : '',
    ),
    ...targets.map((_, row) =>
      line(
        kept.map((c) => c.cells[row]!),
        reasons[row]!,
      ),
    ),
  ];
}

/** The line of a source's last run (and its error on the next), within `width` when given. */
export function runLines(r: RunRow, width: number | undefined, now: Date): string[] {
  const took = r.finished_at ? `, took ${formatDuration(new Date(r.finished_at).getTime() - new Date(r.started_at).getTime())}` : ', running';
  const text =
    `${terminalText(r.source)} (${terminalText(r.environment)}): run ${r.id} by ${r.trigger} ${r.status}, started ${formatAge(r.started_at, now)}${took}; ` +
    `${r.targets_done} of ${r.targets_total} lists done, ${r.targets_failed} not synced`;
  const lines = [text];
  if (r.error) lines.push(...errorLines(terminalText(r.error.split('\n')[0]), width));
  return width === undefined ? lines : lines.map((l) => shorten(l, width));
}

/** Lines of a run's error at most: it is where the table's rows point to for a reason they share. */
const RUN_ERROR_LINES = 4;

/** The run's error under its line, indented; within `width` it is wrapped rather than cut, up to RUN_ERROR_LINES. */
function errorLines(error: string, width: number | undefined): string[] {
  if (width === undefined) return [`  ${error}`];
  const wrapped = wrap(error, Math.max(width - 4, 20));
  const kept = wrapped.slice(0, RUN_ERROR_LINES);
  if (wrapped.length > RUN_ERROR_LINES) kept[RUN_ERROR_LINES - 1] = wrapped.slice(RUN_ERROR_LINES - 1).join(' ');
  return kept.map((l, i) => (i === 0 ? `  ${l}` : `    ${l}`));
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}
