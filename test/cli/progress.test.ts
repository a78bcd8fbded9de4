import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { listKeys } from '../../src/catalog/list-keys.ts';
import { catalog } from '../../src/catalog/catalog.ts';
import { progressLine } from '../../src/cli/output/progress.ts';
import { jobProgressReporter } from '../../src/queue/handlers/job-progress.ts';
import type { TargetProgress } from '../../src/sync/sync-target.ts';

/** A terminal of `columns` columns that records what is written to it. */
function terminal(isTTY: boolean, columns = 80) {
  const stream = Object.assign(new PassThrough(), { isTTY, columns }) as unknown as NodeJS.WriteStream & PassThrough;
  let written = '';
  stream.on('data', (d: Buffer) => (written += d.toString()));
  return { stream, written: () => written };
}

const nmfc = catalog.find((l) => l.key === 'nmfc_codes')!;
const hazmat = catalog.find((l) => l.key === listKeys.find((k) => k === 'hazmat'))!;
const target = (list: typeof nmfc) => ({ source: { environment: 'production' }, list, variant: '' }) as unknown as TargetProgress['target'];

describe('the progress line of refsync sync', () => {
  it('on a terminal: the biggest list in flight, a bar, pages, entries and rate, within the width', async () => {
    const tty = terminal(true, 72);
    let clock = 0;
    const line = progressLine(tty.stream, true, () => clock, {});
    line.update({ target: target(hazmat), pages: 1, entries: 300 });
    clock = 2_000;
    line.update({ target: target(nmfc), pages: 450, entries: 450_000, totalEntries: 1_000_000, totalPages: 1_000 });
    clock = 3_000;
    line.update({ target: target(nmfc), pages: 600, entries: 600_000, totalEntries: 1_000_000, totalPages: 1_000 });
    const frames = tty.written().split('\r\x1b[K').filter(Boolean);
    expect(frames.at(-1)).toBe('production nmfc_codes [##########......] 60% 600/1,000 pages 600,000 e…');
    for (const frame of frames) expect(frame.length).toBeLessThanOrEqual(71);
    const wide = terminal(true, 200);
    const wideLine = progressLine(wide.stream, true, () => clock, {});
    wideLine.update({ target: target(hazmat), pages: 1, entries: 300 });
    wideLine.update({ target: target(nmfc), pages: 450, entries: 450_000, totalEntries: 1_000_000, totalPages: 1_000 });
    clock = 5_000;
    wideLine.update({ target: target(nmfc), pages: 600, entries: 600_000, totalEntries: 1_000_000, totalPages: 1_000 });
    expect(wide.written().split('\r\x1b[K').at(-1)).toBe(
      'production nmfc_codes [##########......] 60% 600/1,000 pages 600,000 entries 75,000/s  (+1 more list)',
    );
    line.clear();
    expect(tty.written().endsWith('\r\x1b[K')).toBe(true);
  });

  it('prints other output on a line of its own: the line cleared before, drawn again after', () => {
    const tty = terminal(true, 100);
    const out = terminal(false);
    const line = progressLine(tty.stream, true, () => 1_000, {});
    line.update({ target: target(nmfc), pages: 1, entries: 1_000 });
    line.print(out.stream, 'changed     hazmat\n');
    expect(out.written()).toBe('changed     hazmat\n');
    expect(tty.written().split('\r\x1b[K')).toEqual(['', 'production nmfc_codes 1 pages 1,000 entries', '', 'production nmfc_codes 1 pages 1,000 entries']);
    line.done('production nmfc_codes');
    line.print(tty.stream, '{"level":40}\n');
    // Nothing is in flight any more: cleared, the text, and no line drawn after it.
    expect(tty.written().endsWith('\r\x1b[K{"level":40}\n')).toBe(true);
  });

  it('NO_COLOR or TERM=dumb: no live line on a terminal either, other output passes as it is', () => {
    for (const env of [{ NO_COLOR: '1' }, { TERM: 'dumb' }]) {
      const tty = terminal(true);
      const line = progressLine(tty.stream, true, () => 1_000, env);
      line.update({ target: target(nmfc), pages: 1, entries: 1_000 });
      line.print(tty.stream, 'result\n');
      line.clear();
      expect(tty.written()).toBe('result\n');
    }
  });

  it('writes nothing when stderr is not a terminal, or with --json', () => {
    for (const [isTTY, enabled] of [
      [false, true],
      [true, false],
    ] as const) {
      const out = terminal(isTTY);
      const line = progressLine(out.stream, enabled, () => 1_000, {});
      line.update({ target: target(nmfc), pages: 1, entries: 1_000 });
      line.clear();
      expect(out.written()).toBe('');
    }
  });
});

describe('BullMQ job progress', () => {
  it('is reported at most once per interval, the first an interval in, and at the end with the final figures once', async () => {
    const sent: unknown[] = [];
    let clock = 0;
    const reporter = jobProgressReporter({ updateProgress: async (p: unknown) => void sent.push(p) }, 1_000, () => clock);
    for (let page = 1; page <= 30; page++) {
      clock = page * 100;
      reporter.onProgress({ pages: page, entries: page * 1_000, totalEntries: 30_000, totalPages: 30 });
    }
    await reporter.finish();
    // At 1 s (page 10), 2 s (page 20) and 3 s (page 30, the final figures: not sent again by finish).
    expect(sent.map((p) => (p as { pages: number }).pages)).toEqual([10, 20, 30]);
    expect(sent.at(-1)).toEqual({ pages: 30, entries: 30_000, totalEntries: 30_000, totalPages: 30, percent: 100 });
    clock += 250;
    reporter.onProgress({ pages: 31, entries: 30_001, totalEntries: 30_001, totalPages: 31 });
    await reporter.finish();
    expect(sent.map((p) => (p as { pages: number }).pages)).toEqual([10, 20, 30, 31]);
  });

  it('a fetch shorter than the interval reports once, its final figures (one Redis round trip per job, not two)', async () => {
    const sent: unknown[] = [];
    let clock = 5_000;
    const reporter = jobProgressReporter({ updateProgress: async (p: unknown) => void sent.push(p) }, 1_000, () => clock);
    clock += 40;
    reporter.onProgress({ pages: 1, entries: 12 });
    await reporter.finish();
    expect(sent).toEqual([{ pages: 1, entries: 12 }]);
  });
});
