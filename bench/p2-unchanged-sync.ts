// P2: the full sync of P1 again with nothing changed upstream: no entry or change row may be
// written (counted), and the wall time is compared with the network bound. Database time per
// target is the target's total minus its fetch (measured by wrapping the page source).
//
//   node bench/p2-unchanged-sync.ts
import { fullSource, networkBoundMs, summarizeTimings, timedFetchOnly, timedFullSync, writtenRows } from './full-sync.ts';
import { createBenchDatabase, figure, machineLine, median, printFigures, runMain, startBenchSandbox, type Figure, withConnections } from './lib.ts';

export interface P2Options {
  latencyMs?: number;
  concurrency?: number;
  poolSize?: number;
  /** Unchanged syncs measured; the figure is their median. */
  repeats?: number;
  inProcessSandbox?: boolean;
  log?: (line: string) => void;
}

export async function runP2(options: P2Options = {}): Promise<Figure[]> {
  const latencyMs = options.latencyMs ?? 50;
  const concurrency = options.concurrency ?? 32;
  const repeats = options.repeats ?? 5;
  const log = options.log ?? console.log;
  const sandbox = await startBenchSandbox({ latencyMs, inProcess: options.inProcessSandbox ?? false });
  const bench = await createBenchDatabase({ poolSize: options.poolSize ?? 10 });
  try {
    log(await machineLine(bench.db));
    const source = fullSource(sandbox);
    const first = await timedFullSync(bench.db, sandbox, source, { concurrency });
    log(`P2 setup: first sync ${Math.round(first.wallMs)} ms, ${first.entries} entries`);
    const walls: number[] = [];
    const dbAvg: number[] = [];
    /** Per sync, the targets set aside by their served digest (nothing normalised). */
    const asServed: number[] = [];
    let last = first;
    // Each unchanged sync is followed by its floor, so that a VM slowing down or speeding up for a
    // while moves both sides alike: measured as five syncs then five floors, the two medians could
    // come from different minutes, and P2's margin (10-20 ms) is less than that drift.
    const fetchOnly: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const before = await writtenRows(bench.db);
      const again = await timedFullSync(bench.db, sandbox, source, { concurrency });
      const after = await writtenRows(bench.db);
      const entries = after.entries - before.entries;
      const changes = after.changes - before.changes;
      if (entries !== 0 || changes !== 0) throw new Error(`P2: an unchanged sync wrote ${entries} entry rows and ${changes} change rows`);
      if (after.snapshots - before.snapshots !== again.targets) throw new Error('P2: expected one snapshot row per target');
      const notUnchanged = again.outcomes.filter((o) => o.status !== 'unchanged');
      if (notUnchanged.length) throw new Error(`P2: ${notUnchanged.length} targets were not 'unchanged'`);
      asServed.push(again.outcomes.filter((o) => o.asServedBefore).length);
      walls.push(again.wallMs);
      dbAvg.push(again.timings.reduce((a, t) => a + t.dbMs, 0) / again.timings.length);
      log(
        `P2 unchanged sync ${i + 1}: ${Math.round(again.wallMs)} ms, 0 entry rows, 0 change rows, ${again.targets} snapshot rows; ${summarizeTimings(again.timings)}`,
      );
      last = again;
      fetchOnly.push(await timedFetchOnly(source, concurrency));
    }
    const bound = networkBoundMs(latencyMs, last.maxPages, last.logins);
    return withConnections(bench, [
      // Judged against the floor of this run (the target: 1.1x), the network bound in the notes.
      figure('P2 unchanged sync', median(walls), 'ms', 'fetch-only floor', median(fetchOnly), {
        target: { ratio: 1.1, better: 'lower' },
        notes: `median of ${repeats} (min ${Math.round(Math.min(...walls))}, max ${Math.round(Math.max(...walls))}); 0 entry and 0 change rows written; ${Math.min(...asServed)}-${Math.max(...asServed)} of ${last.targets} targets set aside by their served digest, none of their entries normalised; database time per target ${median(dbAvg).toFixed(1)} ms (median of the runs' averages; the unchanged lists are recorded together after the last, outside it); ${last.requests} requests (${last.logins} login), concurrency ${Math.min(concurrency, last.targets)}, pool ${options.poolSize ?? 10}, latency ${latencyMs} ms; ${(median(walls) / bound).toFixed(2)}x the network bound`,
      }),
      figure('P2 fetch only, no database (the floor here)', median(fetchOnly), 'ms', 'network bound', bound, {
        notes: `median of ${repeats}, each measured right after an unchanged sync (floors ${fetchOnly.map((ms) => Math.round(ms)).join(', ')} ms); the same fetches by a fresh client with the pages dropped`,
      }),
    ]);
  } finally {
    await bench.drop();
    await sandbox.close();
  }
}

if (import.meta.main) {
  runMain(async () => printFigures(await runP2()));
}
