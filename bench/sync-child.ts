// One `refsync sync` of some lists in a process of its own, so its peak memory is its own: reads a
// JSON job from argv[2], prints one JSON line (wall time, max RSS, outcomes) and exits.
import type { ListKey } from '../src/catalog/list-keys.ts';
import { loadConfig } from '../src/config/load.ts';
import { openDatabase } from '../src/db/database.ts';
import { listVariant, targetsFor } from '../src/catalog/catalog.ts';
import { ListCollector } from '../src/sync/collect/collect.ts';
import { runSync } from '../src/sync/run/run-sync.ts';
import { pino } from 'pino';
import { defaultTuning, type SyncTuning } from '../src/sync/sync-target.ts';
import { createUpstreamClient } from '../src/upstream/index.ts';
import { relaunchWithHeapFlags } from '../src/memory/heap-flags.ts';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { mainThreadCpuSeconds } from './cpu-time.ts';
import { tracedWhenAsked } from './trace-sql.ts';

export interface SyncChildJob {
  env: Record<string, string>;
  databaseUrl: string;
  lists: ListKey[];
  pageSize?: number;
  /**
   * 'sync' (default) syncs; the others measure floors with no database: 'fetch' reads and parses
   * every page and drops it, 'collect' also normalises and hashes every entry (spills dropped).
   */
  mode?: 'sync' | 'fetch' | 'collect';
  /** Tuning for the sync (the defaults when absent): the smoke test shrinks it to reach spills and the index. */
  tuning?: Partial<SyncTuning>;
}

export interface SyncChildResult {
  wallMs: number;
  /** process.resourceUsage().maxRSS at exit, in MiB (the whole process: code, heap, buffers). */
  maxRssMiB: number;
  /**
   * CPU the process used over wallMs, every thread (the main one, V8's GC helpers, libuv's pool), in
   * ms: on 2 cores a floor that keeps more than one of them busy leaves less room for anything beside it.
   */
  cpuMs: number;
  /** The main thread's part of cpuMs (Linux only, 10 ms steps): the chain the sync waits on; the rest is V8's helpers and libuv's pool. */
  mainThreadCpuMs?: number;
  /**
   * V8's full (mark-compact) collections over wallMs. Many more than a run's usual count means
   * objects that die young reach the old generation: a large resync's went from about 7 to 30 when
   * V8 pretenured its normalised rows (src/sync/collect/collect.ts#keptEntry).
   */
  fullGcs: number;
  outcomes: Array<{
    target: string;
    status: string;
    entryCount: number;
    pages: number;
    counts: Record<string, number>;
    error?: string;
    /** The way the list took to the database, from the sync's debug line (sync-target.ts#logLoad). */
    load?: { loader: string; rowsWritten: number; fetches: number };
  }>;
}

// The old-space limit `refsync sync` gives itself (from the default budget: no budget is set here).
relaunchWithHeapFlags();
const job = JSON.parse(process.argv[2] ?? '{}') as SyncChildJob;
const source = loadConfig(job.env).sources[0]!;
const opened = await openDatabase({ url: job.databaseUrl, poolSize: 4, applicationName: 'refsync-bench-sync' });
const db = tracedWhenAsked(opened);
const client = createUpstreamClient(source, undefined, {
  ...(job.pageSize ? { pageSize: job.pageSize } : {}),
});

let fullGcs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as Array<{ detail?: { kind?: number } }>) if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullGcs += 1;
}).observe({ entryTypes: ['gc'] });

/** Where the CPU readings start: cpuSince() gives what was used from here. */
function cpuMark(): { usage: NodeJS.CpuUsage; mainS: number | undefined; fullGcs: number } {
  return { usage: process.cpuUsage(), mainS: mainThreadCpuSeconds(), fullGcs };
}

/** The process's CPU since the mark, its main thread's where /proc has it (clock ticks of 10 ms), in ms; and its full collections. */
function cpuSince(mark: ReturnType<typeof cpuMark>): Pick<SyncChildResult, 'cpuMs' | 'mainThreadCpuMs' | 'fullGcs'> {
  const used = process.cpuUsage(mark.usage);
  const mainNow = mainThreadCpuSeconds();
  return {
    cpuMs: (used.user + used.system) / 1000,
    ...(mark.mainS !== undefined && mainNow !== undefined ? { mainThreadCpuMs: Math.round((mainNow - mark.mainS) * 1000) } : {}),
    fullGcs: fullGcs - mark.fullGcs,
  };
}

/** The first list's pages read with no database, optionally through the collector: a floor. */
async function floor(mode: 'fetch' | 'collect'): Promise<SyncChildResult> {
  const target = targetsFor(source, job.lists)[0]!;
  const request = { basePath: target.list.basePath, path: target.path, ...(target.serviceVersion ? { serviceVersion: target.serviceVersion } : {}) };
  const started = performance.now();
  const cpuStarted = cpuMark();
  const tuning = { ...defaultTuning, ...job.tuning };
  const collector = new ListCollector(target.list, {
    spillThreshold: tuning.spillThreshold,
    spillEvery: tuning.spillEvery,
    spill: async () => undefined,
    hash: { keepAtMost: tuning.hashKeepEntries },
  });
  let pages = 0;
  let entries = 0;
  for await (const batch of client.pages(request)) {
    if (!batch.continuesPage) pages += 1;
    entries += batch.entries.length;
    if (mode === 'collect') await collector.addBatch(batch);
  }
  if (mode === 'collect') entries = (await collector.finish()).entryCount;
  const wallMs = performance.now() - started;
  return {
    wallMs,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    ...cpuSince(cpuStarted),
    outcomes: [{ target: `${target.list.key}:${target.variant}`, status: mode, entryCount: entries, pages, counts: {} }],
  };
}

async function sync(): Promise<SyncChildResult> {
  const started = performance.now();
  const cpuStarted = cpuMark();
  const loads = new Map<string, { loader: string; rowsWritten: number; fetches: number }>();
  const logger = pino(
    { level: 'debug' },
    {
      write: (line: string) => {
        if (!line.includes('"list loaded"')) return;
        const { target, loader, rowsWritten, fetches } = JSON.parse(line) as { target: string; loader: string; rowsWritten: number; fetches: number };
        loads.set(target, { loader, rowsWritten, fetches });
      },
    },
  );
  const [run] = await runSync({
    db,
    logger,
    sources: [source],
    clientFor: () => client,
    trigger: 'cli',
    lists: job.lists,
    concurrency: 4,
    ...(job.tuning ? { tuning: job.tuning } : {}),
  });
  const wallMs = performance.now() - started;
  return {
    wallMs,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    ...cpuSince(cpuStarted),
    outcomes: run!.outcomes.map((o) => ({
      target: `${o.target.list.key}:${o.target.variant}`,
      status: o.status,
      entryCount: o.entryCount,
      pages: o.pages,
      counts: o.counts,
      ...(o.error ? { error: o.error } : {}),
      ...(loads.has(listVariant(o.target)) ? { load: loads.get(listVariant(o.target))! } : {}),
    })),
  };
}

try {
  const result = job.mode && job.mode !== 'sync' ? await floor(job.mode) : await sync();
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await client.close();
  await db.close();
}
