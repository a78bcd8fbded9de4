// P6: one worker process, four sources with a million-entry list each (nmfc_codes, one bare
// array of ~100 MB), triggered together: the four first loads, then four unchanged resyncs of the
// same lists. The figure is the worker's peak RSS (VmHWM of /proc/<pid>/status, reset between the
// two slots through clear_refs) beside the worker's memory budget (REFSYNC_MEMORY_BUDGET_MB), and
// all eight syncs must succeed.
//
//   node bench/p6-worker-memory.ts [budget MiB] [entries]     (default 512, 1000000)
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/load.ts';
import { enqueueManualRuns, QUEUE_NAME } from '../src/queue/index.ts';
import type { SyncTuning } from '../src/sync/sync-target.ts';
import {
  createBenchDatabase,
  figure,
  machineLine,
  printFigures,
  redisUrl,
  runMain,
  sandboxEnv,
  startBenchSandbox,
  writeSourcesConfig,
  type BenchDatabase,
  type Figure,
  withConnections,
} from './lib.ts';
import { deletePrefix, startWorker, stopWorker } from './p4-many-sources.ts';

const LIST = 'nmfc_codes';
const SOURCES = 4;

export interface P6Options {
  /** REFSYNC_MEMORY_BUDGET_MB of the worker (default 512: the figure's target). */
  budgetMb?: number;
  entries?: number;
  /** The sync's tuning (the reduced run lowers the thresholds so that 3,000 entries count as large). */
  tuning?: Partial<SyncTuning>;
  inProcessSandbox?: boolean;
  log?: (line: string) => void;
}

/** The process's peak RSS so far, in MiB (VmHWM), from /proc. */
async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new Error('P6: no VmHWM in /proc/<pid>/status (Linux only)');
  return kb / 1024;
}

/** Resets the peak RSS (writing 5 to clear_refs); false where the kernel does not allow it. */
async function resetPeak(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** What the worker's log says of one slot: the most large lists admitted at once, and its largest memory sample. */
interface SlotMemory {
  mostAdmitted: number;
  sample?: { rss: number; heapUsed: number; heapTotal: number; external: number };
}

/**
 * Reads the worker's debug log (BENCH_WORKER_LOG) from byte `from`: the memory budget's admissions
 * and releases, and the memory samples taken every 250 ms. It tells whether a peak came from two
 * large lists held at once (the budget's failure) or from one list's own use.
 */
async function slotMemory(logFile: string, from: number): Promise<{ memory: SlotMemory; end: number }> {
  const text = (await readFile(logFile)).subarray(from).toString('utf8');
  const memory: SlotMemory = { mostAdmitted: 0 };
  let admitted = 0;
  for (const line of text.split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line) as { msg?: string; rss?: number; heapUsed?: number; heapTotal?: number; external?: number };
    if (event.msg === 'large list admitted to the memory budget') memory.mostAdmitted = Math.max(memory.mostAdmitted, ++admitted);
    else if (event.msg === 'large list released its memory budget') admitted -= 1;
    else if (event.msg === 'memory' && event.rss !== undefined && event.rss > (memory.sample?.rss ?? 0)) {
      memory.sample = { rss: event.rss, heapUsed: event.heapUsed!, heapTotal: event.heapTotal!, external: event.external! };
    }
  }
  return { memory, end: from + Buffer.byteLength(text) };
}

function describeMemory(m: SlotMemory): string {
  const s = m.sample;
  const sample = s ? `; largest 250 ms sample RSS ${s.rss} MiB (V8 heap ${s.heapUsed} used of ${s.heapTotal}, external ${s.external})` : '';
  return `at most ${m.mostAdmitted} large list(s) admitted at once${sample}`;
}

interface Drained {
  ms: number;
  ok: number;
  statuses: string;
}

/** Enqueues one slot of every source and waits until each run has ended; counts the snapshots with the status they should have. */
async function drainSlot(bench: BenchDatabase, queue: Queue, config: ReturnType<typeof loadConfig>, slot: string, changed: boolean): Promise<Drained> {
  const started = performance.now();
  await enqueueManualRuns(queue, config.sources, { slot });
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    const { rows } = await bench.db.query<{ open: number; runs: number }>(
      "select count(*) filter (where status = 'running')::int as open, count(*)::int as runs from refdata.sync_runs where slot = $1",
      [slot],
    );
    if (rows[0]!.runs === SOURCES && rows[0]!.open === 0) break;
    if (Date.now() > deadline) throw new Error(`P6 ${slot}: not drained in time`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const ms = performance.now() - started;
  const { rows } = await bench.db.query<{ status: string; changed: boolean; n: number }>(
    'select s.status, s.changed, count(*)::int as n from refdata.snapshots s join refdata.sync_runs r on r.id = s.run_id where r.slot = $1 group by 1, 2',
    [slot],
  );
  const ok = rows.filter((r) => r.status === 'ok' && r.changed === changed).reduce((n, r) => n + r.n, 0);
  return { ms, ok, statuses: rows.map((r) => `${r.n} ${r.status}${r.changed ? ' changed' : ''}`).join(', ') };
}

export async function runP6(options: P6Options = {}): Promise<Figure[]> {
  const budgetMb = options.budgetMb ?? 512;
  const entries = options.entries ?? 1_000_000;
  const log = options.log ?? console.log;
  const prefix = `refsync-bench-${randomBytes(4).toString('hex')}`;
  const sandbox = await startBenchSandbox({ latencyMs: 0, inProcess: options.inProcessSandbox ?? false });
  const bench = await createBenchDatabase({ poolSize: 2 });
  const dir = await mkdtemp(join(tmpdir(), 'refsync-bench-p6-'));
  const logFile = process.env.BENCH_P6_LOG ?? join(dir, 'worker.log');
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
  const queue = new Queue(QUEUE_NAME, { connection: redis, prefix });
  let worker: ChildProcess | undefined;
  try {
    log(await machineLine(bench.db));
    await sandbox.control('setGenerated', { listKey: LIST, count: entries });
    await sandbox.control('setPaging', { listKey: LIST, shape: 'array', opts: { maxPageSize: 1000 } });
    await writeFile(logFile, '');
    const configFile = await writeSourcesConfig(
      dir,
      Array.from({ length: SOURCES }, (_, i) => `bench-p6-${i}`),
    );
    const env: Record<string, string> = {
      ...sandboxEnv(sandbox),
      REFSYNC_CONFIG: configFile,
      REFSYNC_LISTS: LIST,
      REFSYNC_SCHEDULE: '0 0 1 1 *',
      REFSYNC_CONCURRENCY: String(SOURCES),
      REFSYNC_MEMORY_BUDGET_MB: String(budgetMb),
      REFSYNC_HTTP_PORT: '0',
      DATABASE_URL: bench.url,
      REDIS_URL: redisUrl(),
      LOG_LEVEL: 'silent',
      // The worker's debug log and memory timeline (bench/worker-child.ts), kept at BENCH_P6_LOG if set.
      BENCH_WORKER_LOG: logFile,
      ...(options.tuning ? { BENCH_TUNING: JSON.stringify(options.tuning) } : {}),
    };
    delete env.REFSYNC_ENVIRONMENT;
    const config = loadConfig(env);
    worker = await startWorker(env, prefix);
    const pid = worker.pid!;
    const idle = await peakRssMiB(pid);
    const first = await drainSlot(bench, queue, config, `p6-first-${Date.now()}`, true);
    const firstPeak = await peakRssMiB(pid);
    const firstLog = await slotMemory(logFile, 0);
    log(
      `P6 first loads: ${(first.ms / 1000).toFixed(1)} s, ${first.statuses}; worker peak RSS ${Math.round(firstPeak)} MiB (idle ${Math.round(idle)} MiB); ${describeMemory(firstLog.memory)}`,
    );
    const reset = await resetPeak(pid);
    const unchanged = await drainSlot(bench, queue, config, `p6-unchanged-${Date.now()}`, false);
    const unchangedPeak = await peakRssMiB(pid);
    const unchangedLog = await slotMemory(logFile, firstLog.end);
    log(
      `P6 unchanged resyncs: ${(unchanged.ms / 1000).toFixed(1)} s, ${unchanged.statuses}; worker peak RSS ${Math.round(unchangedPeak)} MiB${reset ? '' : ' (peak not reset: since the start)'}; ${describeMemory(unchangedLog.memory)}`,
    );
    if (first.ok !== SOURCES || unchanged.ok !== SOURCES)
      throw new Error(`P6: ${first.ok} first loads and ${unchanged.ok} unchanged resyncs of ${SOURCES} each succeeded`);
    const shape = `${SOURCES} sources x ${entries} entries (one bare array each), 1 worker, concurrency ${SOURCES}`;
    return withConnections(bench, [
      figure('P6 worker peak RSS, four first loads', firstPeak, 'MiB', 'memory budget', budgetMb, {
        target: { ratio: 1, better: 'lower' },
        notes: `${shape}; ${(first.ms / 1000).toFixed(1)} s for the slot; ${SOURCES} of ${SOURCES} ok; idle worker ${Math.round(idle)} MiB; ${describeMemory(firstLog.memory)}`,
      }),
      figure('P6 worker peak RSS, four unchanged resyncs', unchangedPeak, 'MiB', 'memory budget', budgetMb, {
        target: { ratio: 1, better: 'lower' },
        notes: `${shape}; ${(unchanged.ms / 1000).toFixed(1)} s for the slot; ${SOURCES} of ${SOURCES} ok, unchanged${reset ? '' : '; peak since the worker started'}; ${describeMemory(unchangedLog.memory)}`,
      }),
    ]);
  } finally {
    if (worker) await stopWorker(worker);
    await queue.close().catch(() => undefined);
    await deletePrefix(redis, prefix).catch(() => undefined);
    redis.disconnect();
    await bench.drop();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const budgetMb = process.argv[2] ? Number(process.argv[2]) : undefined;
  const entries = process.argv[3] ? Number(process.argv[3]) : undefined;
  runMain(async () => printFigures(await runP6({ ...(budgetMb ? { budgetMb } : {}), ...(entries ? { entries } : {}) })));
}
