// P1: a full first sync of every list and variant from the sandbox at 50 ms per request, against
// the network bound (login + the longest target's pages, each one latency: perfect parallel fetch).
//
//   node bench/p1-full-sync.ts
import { fullSource, networkBoundMs, summarizeTimings, targetCount, timedFetchOnly, timedFullSync, writtenRows } from './full-sync.ts';
import { createBenchDatabase, figure, machineLine, printFigures, runMain, startBenchSandbox, type Figure } from './lib.ts';

export interface P1Options {
  latencyMs?: number;
  concurrency?: number;
  /** Pool size of the measured run (default 10, openDatabase's default). */
  poolSize?: number;
  /** Also measure with a connection per target, and with targets spread over two clients. */
  variants?: boolean;
  inProcessSandbox?: boolean;
  log?: (line: string) => void;
}

export async function runP1(options: P1Options = {}): Promise<Figure[]> {
  const latencyMs = options.latencyMs ?? 50;
  const concurrency = options.concurrency ?? 32;
  const log = options.log ?? console.log;
  const sandbox = await startBenchSandbox({ latencyMs, inProcess: options.inProcessSandbox ?? false });
  const figures: Figure[] = [];
  try {
    const source = fullSource(sandbox);
    const targets = targetCount(source);
    // The first sync of the process pays for loading and compiling the code: reported apart, and
    // the figure is the next one (fresh database, pool and client: only the process is warm).
    // The measured case is the default pool of 10 (what `refsync sync` uses): targets take a
    // connection only to apply, and on 2 cores 10 applies at once beat one connection per target.
    const poolSize = options.poolSize ?? 10;
    const variants: Array<{ label: string; poolSize: number; clients: number; main: boolean }> = [
      { label: 'P1 full sync, cold process', poolSize, clients: 1, main: false },
      { label: 'P1 full sync', poolSize, clients: 1, main: true },
    ];
    if (options.variants ?? true) {
      variants.push(
        { label: `P1 full sync, pool of ${targets} (a connection per target)`, poolSize: targets, clients: 1, main: false },
        { label: 'P1 full sync, targets over 2 clients', poolSize, clients: 2, main: false },
      );
    }
    let machine = false;
    const measured: Array<{ v: (typeof variants)[number]; result: Awaited<ReturnType<typeof timedFullSync>> }> = [];
    for (const v of variants) {
      const bench = await createBenchDatabase({ poolSize: v.poolSize });
      try {
        if (!machine) {
          log(await machineLine(bench.db));
          machine = true;
        }
        const result = await timedFullSync(bench.db, sandbox, source, { concurrency, clients: v.clients });
        const rows = await writtenRows(bench.db);
        if (rows.entries !== result.entries) throw new Error(`P1: ${result.entries} entries fetched but ${rows.entries} rows written`);
        log(`${v.label}: ${summarizeTimings(result.timings)}`);
        measured.push({ v, result });
      } finally {
        await bench.drop();
      }
    }
    // The floor of this run: the same fetches with no database. Each sync is judged against it (the
    // issue's target: the database work hides behind the network, up to 1.3x the floor).
    const fetchOnly = await timedFetchOnly(source, concurrency);
    for (const { v, result } of measured) {
      const bound = networkBoundMs(latencyMs, result.maxPages, result.logins);
      figures.push(
        figure(v.label, result.wallMs, 'ms', 'fetch-only floor', fetchOnly, {
          ...(v.main ? { target: { ratio: 1.3, better: 'lower' as const } } : {}),
          notes: `${result.targets} targets, ${result.entries} entries, ${result.requests} requests (${result.logins} logins), concurrency ${Math.min(concurrency, targets)}, pool ${v.poolSize}, ${v.clients} client(s), latency ${latencyMs} ms, longest target ${result.maxPages} page(s); ${(result.wallMs / bound).toFixed(2)}x the network bound`,
        }),
      );
    }
    figures.push(
      figure('P1 fetch only, no database (the floor here)', fetchOnly, 'ms', 'network bound', networkBoundMs(latencyMs, 1, 1), {
        notes: 'login and every target fetched at once by a fresh client, pages dropped; the client and the sandbox share the cores',
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
