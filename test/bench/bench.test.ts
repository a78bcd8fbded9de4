// Smoke runs of the benchmarks at small sizes, so the scripts never rot: each must produce its
// figures and correct data (the scripts check their data and throw otherwise). No timing is
// asserted here; the figures are measured by `npm run bench`.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { Figure } from '../../bench/lib.ts';
import { runP1 } from '../../bench/p1-full-sync.ts';
import { runP2 } from '../../bench/p2-unchanged-sync.ts';
import { runP3 } from '../../bench/p3-large-list.ts';
import { runP4 } from '../../bench/p4-many-sources.ts';
import { runP5 } from '../../bench/p5-impact.ts';
import { runP6 } from '../../bench/p6-worker-memory.ts';
import { runP7 } from '../../bench/p7-change-feed.ts';
import { everySandboxTarget } from '../helpers/targets.ts';

const quiet = () => undefined;

function expectFigures(figures: Figure[], names: string[]): void {
  expect(figures.map((f) => f.name)).toEqual(names);
  for (const f of figures) {
    expect(Number.isFinite(f.value)).toBe(true);
    expect(Number.isFinite(f.baseline)).toBe(true);
  }
}

beforeAll(() => {
  process.env.DATABASE_URL = inject('databaseServerUrl');
  process.env.REDIS_URL = inject('redisUrl');
});

describe('benchmarks, reduced', () => {
  it('P1: a full sync of every target against the fetch-only floor of the same run', async () => {
    const figures = await runP1({ latencyMs: 5, repeats: 2, variants: false, inProcessSandbox: true, log: quiet });
    expectFigures(figures, ['P1 full sync, cold process', 'P1 full sync', 'P1 fetch only, no database (the floor here)']);
    expect(figures[1]!.notes).toMatch(new RegExp(`${everySandboxTarget()} targets`));
    expect(figures[1]).toMatchObject({ baselineName: 'fetch-only floor', baseline: figures[2]!.value, target: { ratio: 1.5, better: 'lower' } });
  }, 60_000);

  it('P2: an unchanged sync writes no entry or change rows', async () => {
    const figures = await runP2({ latencyMs: 5, repeats: 1, inProcessSandbox: true, log: quiet });
    expectFigures(figures, ['P2 unchanged sync', 'P2 fetch only, no database (the floor here)']);
    expect(figures[0]!.notes).toMatch(/0 entry and 0 change rows written/);
    expect(figures[0]).toMatchObject({ baselineName: 'fetch-only floor', baseline: figures[1]!.value, target: { ratio: 1.1, better: 'lower' } });
  }, 60_000);

  it('P3: load, 1% resync and peak RSS of a generated list, with the psql \\copy baseline', async () => {
    // Thresholds scaled to 3,000 entries (pages of 1,000), so the smoke run takes the ways a million
    // does: the first load spills into a direct load by COPY, the resync reads the current-row index.
    const tuning = { spillThreshold: 1_000, indexAfterEntries: 500, copyMinRows: 1_000 };
    const figures = await runP3({ entries: 3_000, shapes: ['next'], inProcessSandbox: true, log: quiet, tuning });
    expectFigures(figures, [
      'P3 load',
      'P3 peak RSS, first load',
      'P3 resync 1% changed',
      'P3 resync 1% changed vs its floor',
      'P3 peak RSS, resync',
      'P3 peak RSS, unchanged resync',
    ]);
    // The first load streamed straight into the entries; the resync wrote only the 30 the index did
    // not match, staged or streamed (streamed when the index, read as the fetch began, is in by the first spill).
    expect(figures[0]!.notes).toMatch(/first-load loader, 3000 rows written\)/);
    expect(figures[2]!.notes).toMatch(/^30 modified of 3000 \((streamed-)?resync loader, 30 rows written\)/);
    // Each side of the pair reports its CPU, read in the sync child (its main thread's from /proc where there is one) and from /proc for
    // Postgres, and the child's full collections.
    expect(figures[3]!.notes).toMatch(
      /the median pair's CPU: the floor's sync \d+\.\d s \((main thread \d+\.\d s, )?\d+ full GCs\), postgres \d+\.\d s, .*; the resync's sync \d+\.\d s \((main thread \d+\.\d s, )?\d+ full GCs\), postgres \d+\.\d s/,
    );
  }, 120_000);

  it('P4: a first-load slot and an unchanged slot of several sources drained by a worker, every target exactly once', async () => {
    const figures = await runP4({
      sources: 3,
      workers: 1,
      concurrency: 4,
      latencyMs: 2,
      lists: 'hazmat,shipment_modes,carrier_package_types',
      inProcessSandbox: true,
      log: quiet,
    });
    expectFigures(figures, ['P4 first-load slot', 'P4 first-load Postgres CPU per target', 'P4 throughput', 'P4 unchanged resync slot', 'P4 Redis memory']);
    expect(figures[0]!.notes).toMatch(/every list a first load, tried in its run job.*3 sources x 6 targets = 18 targets in 3 run jobs.*exactly once: yes/);
    expect(figures[0]!.target).toEqual({ ratio: 3, better: 'lower' });
    expect(figures[1]!.target).toEqual({ ratio: 1, better: 'lower' });
    expect(figures[3]!.notes).toMatch(/nothing changed upstream, each run job syncing its lists .*; 3 sources x 6 targets.*exactly once, unchanged: yes/);
    expect(figures[3]!.target).toEqual({ ratio: 2, better: 'lower' });
  }, 120_000);

  it('P5: the impact of a 1% resync on a fact table, beside a count(*) group by of it', async () => {
    const figures = await runP5({ facts: 20_000, codes: 1_000, repeats: 1, rounds: 2, inProcessSandbox: true, log: quiet });
    expectFigures(figures, [
      'P5 impact of one sync, no index',
      'P5 impact of one sync, index on (code, shipped_at)',
      'P5 resync 1% changed, with impact (no index)',
      'P5 floor of the resync with impact (no index): the resync + one scan of the facts',
      'P5 resync 1% changed, with impact (no index) vs its floor',
      'P5 resync 1% changed, with impact (index on (code, shipped_at))',
    ]);
    expect(figures[0]!.notes).toMatch(/^20000 facts, 10 of 1000 codes modified, \d+ facts in use/);
    expect(figures[2]!.notes).toMatch(/^1000 entries, 20000 facts; median of 2 rounds, alternating which goes first/);
    // The floor is the resync without usage columns plus the scan: the same baseline, a larger value, no target.
    expect(figures[3]!.baseline).toBe(figures[2]!.baseline);
    expect(figures[3]!.value).toBeGreaterThan(figures[3]!.baseline);
    expect(figures[3]!.target).toBeUndefined();
    expect(figures[3]!.notes).toMatch(/^a filtered count\(\*\) of the 20000 facts, \d+ ms \(median of 1\)/);
    // Without an index the resync's target is its floor: within 1.1x of it, not 3x the resync alone.
    expect(figures[2]!.target).toBeUndefined();
    expect(figures[4]).toMatchObject({ value: figures[2]!.value, baseline: figures[3]!.value, target: { ratio: 1.1, better: 'lower' } });
    expect(figures[5]!.target).toEqual({ ratio: 3, better: 'lower' });
  }, 120_000);

  it('P6: one worker, four sources with a large list each, first loads then unchanged resyncs, peak RSS beside the budget', async () => {
    // 500 entries make a list large here, so that 3,000 take the budget's way as a million do.
    const figures = await runP6({
      entries: 3_000,
      budgetMb: 512,
      tuning: { indexAfterEntries: 500, spillThreshold: 1_000 },
      inProcessSandbox: true,
      log: quiet,
    });
    expectFigures(figures, ['P6 worker peak RSS, four first loads', 'P6 worker peak RSS, four unchanged resyncs']);
    expect(figures[0]).toMatchObject({ baselineName: 'memory budget', baseline: 512, target: { ratio: 1, better: 'lower' } });
    expect(figures[0]!.notes).toMatch(/4 sources x 3000 entries .*; 4 of 4 ok/);
    expect(figures[1]!.notes).toMatch(/4 of 4 ok, unchanged/);
  }, 120_000);

  it('P7: the change feed read page by page beside the id cursor over the same rows', async () => {
    const figures = await runP7({ changes: 2_500, pageSize: 1_000, repeats: 1, log: quiet });
    expectFigures(figures, ['P7 change feed read']);
    expect(figures[0]).toMatchObject({ unit: 'changes/s', baselineName: 'id cursor', target: { ratio: 0.8, better: 'higher' } });
    expect(figures[0]!.notes).toMatch(/^2500 changes in pages of 1000/);
  }, 60_000);
});
