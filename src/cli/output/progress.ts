// Live progress of `refsync sync` on stderr, for a person at a terminal: the list being fetched
// with the most entries so far, its pages, entries and rate, and a bar when the service states a
// total. One line, redrawn at most every 100 ms, cleared before any other output (result lines and
// log lines alike) and drawn again after it. Nothing at all when stderr is not a terminal, with
// NO_COLOR or TERM=dumb, or with --json: logs, pipes and plain terminals get no control characters.
// The label and figures are the program's own (configured environment, catalog list key, counts).
import type { TargetProgress } from '../../sync/sync-target.ts';
import { targetLabel } from '../../catalog/catalog.ts';

interface Running {
  label: string;
  progress: TargetProgress;
  /** When the first page came, and its entries: the rate counts from there. */
  started: number;
  startEntries: number;
}

export interface ProgressLine {
  update(progress: TargetProgress): void;
  /** A target is done: forget it. */
  done(label: string): void;
  /** Clears the line so other output can be written, then lets the next update redraw it. */
  clear(): void;
  /**
   * Writes `text` (whole lines) to `to` without sharing a screen line with the progress line: the line
   * is cleared before and drawn again after, when a list is still in flight.
   */
  print(to: NodeJS.WritableStream, text: string): void;
}

/**
 * Whether a live line may be drawn: only on a terminal, and never when the user asked for plain
 * output (NO_COLOR, see no-color.org, or TERM=dumb): then nothing but text and newlines is written.
 */
export function liveOutputAllowed(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

const REDRAW_MS = 100;
const BAR = 16;

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');

/** The text of the line, cut to `width`. */
export function progressText(running: Running, others: number, now: number, width: number): string {
  const p = running.progress;
  const seconds = (now - running.started) / 1000;
  const rate = seconds > 0 ? ` ${thousands((p.entries - running.startEntries) / seconds)}/s` : '';
  const total = p.totalEntries;
  const share = total ? Math.min(p.entries / total, 1) : undefined;
  // The share of the stated total is the bar's; the entries then need not repeat the total, which
  // keeps the line within 80 columns.
  const bar = share === undefined ? '' : `[${'#'.repeat(Math.round(share * BAR)).padEnd(BAR, '.')}] ${Math.floor(share * 100)}% `;
  const pages = `${thousands(p.pages)}${p.totalPages ? `/${thousands(p.totalPages)}` : ''} pages`;
  const entries = `${thousands(p.entries)}${total && !bar ? `/${thousands(total)}` : ''} entries`;
  const more = others > 0 ? `  (+${others} more list${others === 1 ? '' : 's'})` : '';
  const text = `${running.label} ${bar}${pages} ${entries}${rate}${more}`;
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/** The progress line on `stream`, or one that only passes text through when live output is not allowed. */
export function progressLine(
  stream: NodeJS.WriteStream,
  enabled: boolean,
  now: () => number = performance.now.bind(performance),
  env: NodeJS.ProcessEnv = process.env,
): ProgressLine {
  if (!enabled || !liveOutputAllowed(stream, env)) return { update() {}, done() {}, clear() {}, print: (to, text) => void to.write(text) };
  const running = new Map<string, Running>();
  let shown = false;
  let lastDraw = 0;
  const draw = () => {
    const lead = [...running.values()].sort((a, b) => b.progress.entries - a.progress.entries)[0];
    if (!lead) return;
    const width = Math.max((stream.columns || 80) - 1, 20);
    stream.write(`\r\x1b[K${progressText(lead, running.size - 1, now(), width)}`);
    shown = true;
    lastDraw = now();
  };
  const clear = () => {
    if (shown) stream.write('\r\x1b[K');
    shown = false;
    lastDraw = 0;
  };
  return {
    update(progress) {
      const label = targetLabel(progress.target, true);
      const entry = running.get(label);
      if (entry) entry.progress = progress;
      else running.set(label, { label, progress, started: now(), startEntries: progress.entries });
      if (now() - lastDraw >= REDRAW_MS) draw();
    },
    done(label) {
      running.delete(label);
    },
    clear,
    print(to, text) {
      clear();
      to.write(text);
      draw();
    },
  };
}
