// Live progress of `refsync sync` on stderr, for a person at a terminal: the list being fetched
// with the most entries so far, its pages, entries and rate, and a bar when the service states a
// total. One line, redrawn at most every 100 ms and cleared before any other output. Nothing at
// all when stderr is not a terminal (or with --json): logs and pipes get no control characters.
import type { TargetProgress } from '../sync/sync-target.ts';

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
}

const REDRAW_MS = 100;
const BAR = 16;

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');

export function labelOf(p: { target: TargetProgress['target'] }): string {
  return `${p.target.source.environment} ${p.target.list.key}${p.target.variant ? ` ${p.target.variant}` : ''}`;
}

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

/** The progress line on `stream`, or one that does nothing when the stream is not a terminal. */
export function progressLine(stream: NodeJS.WriteStream, enabled: boolean, now: () => number = performance.now.bind(performance)): ProgressLine {
  if (!enabled || !stream.isTTY) return { update() {}, done() {}, clear() {} };
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
      const label = labelOf(progress);
      const entry = running.get(label);
      if (entry) entry.progress = progress;
      else running.set(label, { label, progress, started: now(), startEntries: progress.entries });
      if (now() - lastDraw >= REDRAW_MS) draw();
    },
    done(label) {
      running.delete(label);
    },
    clear,
  };
}
