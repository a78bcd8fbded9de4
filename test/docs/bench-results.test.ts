// The performance page's table is the newest runs of bench/results/ as scripts/render-bench-results.ts
// renders them, and every run there is whole: a machine, a date, the benchmarks run, and each figure
// with its baseline and a ratio that agrees with them. `npm run bench -- --save` writes such a file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { figure, machineInfo } from '../../bench/lib.ts';
import { readRunRecords, recordFileName, runRecord, saveRunRecord, type RunRecord } from '../../bench/run-record.ts';
import { benchResultsMarkdown, currentRuns, fullRun, performancePath, performanceWithResults } from '../../scripts/render-bench-results.ts';

const regenerate = 'out of date: run `node scripts/render-bench-results.ts`';

beforeAll(() => {
  process.env.REDIS_URL = inject('redisUrl');
});

describe('bench/results/ and the performance page', () => {
  it("docs/performance.md's table is the rendering of the newest runs", () => {
    const page = readFileSync(performancePath, 'utf8');
    expect(page, regenerate).toBe(performanceWithResults(page));
    expect(page).toContain(benchResultsMarkdown());
    // One current table, what each figure measures and what limits it: a page, not a log.
    expect(page.split('\n').length).toBeLessThanOrEqual(250);
  });

  it('every recorded run is whole and its ratios agree with its values', () => {
    const records = readRunRecords();
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(r.date, recordFileName(r)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(r.commit, recordFileName(r)).toMatch(/^[0-9a-f]{40}$/);
      expect(r.machine.cores, recordFileName(r)).toBeGreaterThan(0);
      expect(r.benchmarks.length).toBeGreaterThan(0);
      expect(r.figures.length).toBeGreaterThan(0);
      for (const f of r.figures) {
        const where = `${recordFileName(r)}: ${f.name}`;
        expect(Number.isFinite(f.ratio), where).toBe(true);
        expect(f.unit && f.baselineName, where).toBeTruthy();
        // A run measured by --save has every value; a converted one may have the ratio alone.
        if (!r.convertedFrom) expect(f.value !== null && f.baseline !== null, where).toBe(true);
        if (f.value !== null && f.baseline !== null) expect(Math.abs(f.value / f.baseline - f.ratio), where).toBeLessThan(0.02 * f.ratio + 0.01);
        if (f.target) expect(f.met, where).toBe(f.target.better === 'lower' ? f.ratio <= f.target.ratio : f.ratio >= f.target.ratio);
      }
    }
  });

  it("the rendered table shows the newest full run's commit, a column per run, the median and the range, and no commit hash", () => {
    const records = readRunRecords();
    const runs = currentRuns(records);
    const table = benchResultsMarkdown(records);
    // A run of some benchmarks (a before/after of a few) is kept in the ranges but leaves the table to the newest full run.
    const newestFull = records.filter((r) => fullRun.every((b) => r.benchmarks.includes(b))).at(-1) ?? records.at(-1)!;
    expect(runs.every((r) => r.commit === newestFull.commit)).toBe(true);
    expect(table).toContain(`| figure | ${runs.map((_, i) => `run ${i + 1}`).join(' | ')} | median |`);
    for (const r of runs) expect(table).not.toContain(r.commit!.slice(0, 7));
    expect(table).toMatch(/\| P1 full sync \| [\d.]+x/);
  });

  it('a saved run records the machine, the commit and the date, and reads back as written', async () => {
    const client = new pg.Client({ connectionString: inject('databaseServerUrl') });
    await client.connect();
    const dir = mkdtempSync(join(tmpdir(), 'refsync-bench-results-'));
    try {
      const machine = await machineInfo(client);
      expect(machine.postgres).toMatch(/^\d+\.\d+/);
      expect(machine.redis).toMatch(/^\d+\.\d+/);
      expect(machine.node).toBe(process.version);
      expect(machine.cores).toBeGreaterThan(0);
      const record = runRecord(new Date('2026-12-01T10:00:00Z'), ['p2'], machine, [
        figure('P2 unchanged sync', 105, 'ms', 'fetch-only floor', 100, { target: { ratio: 1.1, better: 'lower' } }),
      ]);
      const path = saveRunRecord(record, dir);
      expect(path).toMatch(/2026-12-01T10-00-00Z-[0-9a-f]{7}\.json$/);
      const [read] = readRunRecords(dir) as [RunRecord];
      expect(read).toEqual(record);
      expect(read.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(read.figures[0]).toMatchObject({ value: 105, baseline: 100, met: true });
      expect(benchResultsMarkdown([read])).toContain('| P2 unchanged sync | 1.05x (105 vs 100 ms) | 1.05x | 1.05x-1.05x (1) | ≤ 1.1x: met |');
      // A run of some benchmarks is kept but does not replace the table of the newest full run.
      const records = [...readRunRecords(), read];
      expect(currentRuns(records)).toEqual(currentRuns(readRunRecords()));
      expect(benchResultsMarkdown(records)).toContain('| P2 unchanged sync | ');
      expect(benchResultsMarkdown(records)).toContain(`range (runs) over all ${records.length} recorded`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await client.end();
    }
  });
});
