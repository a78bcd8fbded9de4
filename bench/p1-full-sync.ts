// P1: a full first sync of every list and variant from the sandbox at 50 ms per request, against
// the network bound (login + the longest target's pages, each one latency: perfect parallel fetch).
//
//   node bench/p1-full-sync.ts
import { cpuSeconds, cpuUsed } from './cpu-time.ts';
import { fullSource, networkBoundMs, summarizeTimings, targetCount, timedFetchOnly, timedFullSync, writtenRows } from './full-sync.ts';
import { createBenchDatabase, figure, machineLine, median, printFigures, runMain, startBenchSandbox, type BenchSandbox, type Figure } from './lib.ts';
import type { SourceConfig } from '../src/config/types.ts';

export interface P1Options {
  latencyMs?: number;
  concurrency?: number;
  /** Pool size of the measured run (default 5: what `refsync sync` opens with REFSYNC_CONCURRENCY's default 4). */
  poolSize?: number;
  /** First syncs measured, each on a database, pool and client of its own; the figure is their median. */
  repeats?: number;
  /** Also measure with a connection per target, and with targets spread over two clients. */
  variants?: boolean;
  inProcessSandbox?: boolean;
  log?: (line: string) => void;
}

/** One first sync on a fresh database: its result, the Postgres CPU it took and the connections it opened. */
interface MeasuredSync {
  result: Awaited<ReturnType<typeof timedFullSync>>;
  /** Milliseconds of CPU of the Postgres server during the sync (every backend, the new ones' start included); undefined without /proc. */
  postgresMs: number | undefined;
  backends: number;
}

async function firstSync(
  sandbox: BenchSandbox,
  source: SourceConfig,
  options: { label: string; poolSize: number; concurrency: number; clients: number; log: (line: string) => void; machineLine?: boolean },
): Promise<MeasuredSync> {
  const { label, log } = options;
  const bench = await createBenchDatabase({ poolSize: options.poolSize });
  try {
    if (options.machineLine) log(await machineLine(bench.db));
    const before = await cpuSeconds([]);
    const result = await timedFullSync(bench.db, sandbox, source, { concurrency: options.concurrency, clients: options.clients });
    const used = cpuUsed(before, await cpuSeconds([]));
    const rows = await writtenRows(bench.db);
    if (rows.entries !== result.entries) throw new Error(`P1: ${result.entries} entries fetched but ${rows.entries} rows written`);
    const { rows: open } = await bench.db.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = current_database()');
    log(`${label}: ${Math.round(result.wallMs)} ms; ${summarizeTimings(result.timings)}`);
    return { result, postgresMs: used.postgres === undefined ? undefined : used.postgres * 1000, backends: open[0]!.n };
  } finally {
    await bench.drop();
  }
}

export async function runP1(options: P1Options = {}): Promise<Figure[]> {
  const latencyMs = options.latencyMs ?? 50;
  const concurrency = options.concurrency ?? 32;
  const repeats = options.repeats ?? 5;
  const log = options.log ?? console.log;
  const sandbox = await startBenchSandbox({ latencyMs, inProcess: options.inProcessSandbox ?? false });
  const figures: Figure[] = [];
  try {
    const source = fullSource(sandbox);
    const targets = targetCount(source);
    // The measured case is the pool `refsync sync` has by default (REFSYNC_CONCURRENCY 4, plus its
    // run's claim: at most 5 connections; a first sync opens 3): targets take a
    // connection only to apply. Each sync has a fresh database, pool and client (only the process is
    // warm): a first sync opens its connections, and a new backend's start and first catalog reads
    // are most of its Postgres CPU.
    const poolSize = options.poolSize ?? 5;
    // The first sync of the process pays for loading and compiling the code: reported apart.
    const cold = await firstSync(sandbox, source, { label: 'P1 full sync, cold process', poolSize, concurrency, clients: 1, log, machineLine: true });
    // Each sync is followed by its floor (the same fetches with no database), so that a VM slowing
    // down or speeding up for a while moves both sides alike; a single sync swung 2.3x-4.4x between
    // runs of the same code.
    const syncs: MeasuredSync[] = [];
    const floors: number[] = [];
    for (let i = 0; i < repeats; i++) {
      syncs.push(await firstSync(sandbox, source, { label: `P1 full sync ${i + 1}`, poolSize, concurrency, clients: 1, log }));
      floors.push(await timedFetchOnly(source, concurrency));
    }
    const variants: Array<{ label: string; poolSize: number; clients: number }> = [];
    if (options.variants ?? true) {
      variants.push(
        { label: `P1 full sync, pool of ${targets} (a connection per target)`, poolSize: targets, clients: 1 },
        { label: 'P1 full sync, targets over 2 clients', poolSize, clients: 2 },
      );
    }
    const others: Array<{ label: string; poolSize: number; clients: number; sync: MeasuredSync }> = [];
    for (const v of variants)
      others.push({ ...v, sync: await firstSync(sandbox, source, { label: v.label, poolSize: v.poolSize, concurrency, clients: v.clients, log }) });

    const floor = median(floors);
    const describe = (sync: MeasuredSync, pool: number, clients: number) => {
      const r = sync.result;
      return `${r.targets} targets, ${r.entries} entries, ${r.requests} requests (${r.logins} logins), concurrency ${Math.min(concurrency, r.targets)}, pool ${pool}, ${clients} client(s), latency ${latencyMs} ms, longest target ${r.maxPages} page(s)`;
    };
    const postgresCpu = (ms: number | undefined, what = '') =>
      ms === undefined ? 'Postgres CPU not available (no /proc)' : `Postgres CPU${what} ${Math.round(ms)} ms`;
    const walls = syncs.map((s) => s.result.wallMs);
    const wall = median(walls);
    const last = syncs.at(-1)!;
    const bound = networkBoundMs(latencyMs, last.result.maxPages, last.result.logins);
    const cpus = syncs.flatMap((s) => (s.postgresMs === undefined ? [] : [s.postgresMs]));
    figures.push(
      figure('P1 full sync, cold process', cold.result.wallMs, 'ms', 'fetch-only floor', floor, {
        notes: `${describe(cold, poolSize, 1)}; ${postgresCpu(cold.postgresMs)}, ${cold.backends} connections`,
      }),
      figure('P1 full sync', wall, 'ms', 'fetch-only floor', floor, {
        target: { ratio: 1.5, better: 'lower' },
        notes: `median of ${repeats} (${walls.map((ms) => Math.round(ms)).join(', ')} ms), each on a fresh database and pool; ${describe(last, poolSize, 1)}; ${postgresCpu(cpus.length ? median(cpus) : undefined, ' per sync (median)')}, ${median(syncs.map((s) => s.backends))} connections; ${(wall / bound).toFixed(2)}x the network bound`,
      }),
      ...others.map((o) =>
        figure(o.label, o.sync.result.wallMs, 'ms', 'fetch-only floor', floor, {
          notes: `one sync; ${describe(o.sync, o.poolSize, o.clients)}; ${postgresCpu(o.sync.postgresMs)}, ${o.sync.backends} connections`,
        }),
      ),
      figure('P1 fetch only, no database (the floor here)', floor, 'ms', 'network bound', networkBoundMs(latencyMs, 1, 1), {
        notes: `median of ${repeats}, each right after a sync (${floors.map((ms) => Math.round(ms)).join(', ')} ms); login and every target fetched at once by a fresh client, pages dropped; the client and the sandbox share the cores`,
      }),
    );
  } finally {
    await sandbox.close();
  }
  return figures;
}

if (import.meta.main) {
  runMain(async () => printFigures(await runP1()));
}
