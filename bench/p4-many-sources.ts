// P4: 1,000 sources x every target, drained by 2 worker processes (BullMQ) on this machine, from
// the sandbox at 20 ms latency: time to drain one slot (the first load: each run job tries its
// lists itself and applies their first loads together) and the Postgres CPU it took per target,
// jobs/s, Redis memory, and that every target ran exactly once; then the slot users pay every hour,
// a second one with nothing changed upstream (the steady state: each run job syncs its lists, all
// known small by then, itself). The baseline is the network bound of the same work:
// every request (one login per source and worker, one page per target) at the latency, spread over
// all the worker slots (workers x REFSYNC_CONCURRENCY) in perfect parallel.
//
//   node bench/p4-many-sources.ts [sources]     (default 1000, or BENCH_P4_SOURCES)
//   BENCH_P4_SOURCES=200 npm run bench -- p4    (a smaller P4 inside the full run)
//   BENCH_CPU_PROF=/tmp/prof node bench/p4-many-sources.ts 200   (--cpu-prof of each worker)
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { targetsFor } from '../src/catalog/catalog.ts';
import { cpuSeconds, cpuUsed, describeCpu } from './cpu-time.ts';
import { loadConfig } from '../src/config/load.ts';
import { enqueueManualRuns, QUEUE_NAME } from '../src/queue/index.ts';
import {
  ALL_CHARGE_CODE_VERSIONS,
  benchChildFlags,
  createBenchDatabase,
  figure,
  machineLine,
  printFigures,
  redisUrl,
  runMain,
  sandboxEnv,
  startBenchSandbox,
  writeSourcesConfig,
  type Figure,
  withConnections,
} from './lib.ts';

const here = fileURLToPath(new URL('.', import.meta.url));

export interface P4Options {
  /** Default BENCH_P4_SOURCES, else 1000. */
  sources?: number;
  workers?: number;
  /** Jobs each worker runs at once (REFSYNC_CONCURRENCY). */
  concurrency?: number;
  latencyMs?: number;
  /** REFSYNC_LISTS for every source; default all lists. */
  lists?: string;
  inProcessSandbox?: boolean;
  /** Give up waiting for the slot to drain after this long (default 20 min). */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export function startWorker(env: Record<string, string>, prefix: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...benchChildFlags(), `${here}worker-child.ts`, prefix], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before it was ready`)));
  });
}

export async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
}

export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

function sourcesFromEnv(): number | undefined {
  const raw = process.env.BENCH_P4_SOURCES;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_P4_SOURCES must be a positive integer, not '${raw}'`);
  return n;
}

export async function runP4(options: P4Options = {}): Promise<Figure[]> {
  const sourceCount = options.sources ?? sourcesFromEnv() ?? 1000;
  const workers = options.workers ?? 2;
  const concurrency = options.concurrency ?? 16;
  const latencyMs = options.latencyMs ?? 20;
  const log = options.log ?? console.log;
  const prefix = `refsync-bench-${randomBytes(4).toString('hex')}`;
  const sandbox = await startBenchSandbox({ latencyMs, inProcess: options.inProcessSandbox ?? false });
  const bench = await createBenchDatabase({ poolSize: 4 });
  const dir = await mkdtemp(join(tmpdir(), 'refsync-bench-p4-'));
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
  const children: ChildProcess[] = [];
  const queue = new Queue(QUEUE_NAME, { connection: redis, prefix });
  try {
    log(await machineLine(bench.db));
    const configFile = await writeSourcesConfig(
      dir,
      Array.from({ length: sourceCount }, (_, i) => `bench-${String(i).padStart(4, '0')}`),
    );
    const env: Record<string, string> = {
      ...sandboxEnv(sandbox),
      REFSYNC_CONFIG: configFile,
      REFSYNC_CHARGE_CODE_VERSIONS: ALL_CHARGE_CODE_VERSIONS,
      // A schedule that does not fire during the benchmark: the slot is enqueued below.
      REFSYNC_SCHEDULE: '0 0 1 1 *',
      REFSYNC_CONCURRENCY: String(concurrency),
      DATABASE_URL: bench.url,
      REDIS_URL: redisUrl(),
      LOG_LEVEL: 'silent',
      ...(options.lists ? { REFSYNC_LISTS: options.lists } : {}),
    };
    delete env.REFSYNC_ENVIRONMENT;
    const config = loadConfig(env);
    const targetsPerSource = targetsFor(config.sources[0]!).length;
    const targets = sourceCount * targetsPerSource;

    const redisBefore = await usedMemory(redis);
    const startedWorkers = performance.now();
    for (let w = 0; w < workers; w++) children.push(await startWorker({ ...env, REFSYNC_HTTP_PORT: '0' }, prefix));
    log(`P4 setup: ${workers} workers started (each installs ${sourceCount} schedulers) in ${Math.round(performance.now() - startedWorkers)} ms`);
    const redisIdle = await usedMemory(redis);

    const jobs = sourceCount + targets;
    const slots = workers * concurrency;
    const requests = targets + sourceCount * workers;
    const bound = (Math.ceil(requests / slots) * latencyMs) / 1000;
    const shape = `${sourceCount} sources x ${targetsPerSource} targets = ${targets} targets in ${sourceCount} run jobs; ${workers} workers x concurrency ${concurrency}; latency ${latencyMs} ms`;

    /** Enqueues one slot of every source, waits until every run has ended, and checks every target ran once with the status it should. */
    const drainSlot = async (name: string, status: 'changed' | 'unchanged') => {
      const slot = `bench-${name.replace(/ /g, '-')}-${Date.now()}`;
      let redisPeak = await usedMemory(redis);
      const sampler = setInterval(() => {
        usedMemory(redis).then(
          (m) => (redisPeak = Math.max(redisPeak, m)),
          () => undefined,
        );
      }, 250);
      const cpuBefore = await cpuSeconds(children.map((c) => c.pid!));
      const started = performance.now();
      try {
        await enqueueManualRuns(queue, config.sources, { slot });
        const enqueuedMs = performance.now() - started;
        const deadline = Date.now() + (options.timeoutMs ?? 20 * 60_000);
        for (;;) {
          const { rows } = await bench.db.query<{ open: number; runs: number }>(
            "select count(*) filter (where status = 'running')::int as open, count(*)::int as runs from refdata.sync_runs where slot = $1",
            [slot],
          );
          if (rows[0]!.runs === sourceCount && rows[0]!.open === 0) break;
          if (Date.now() > deadline) throw new Error(`P4 ${name}: slot not drained in time (${rows[0]!.runs} runs, ${rows[0]!.open} open)`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const drainMs = performance.now() - started;
        const used = cpuUsed(cpuBefore, await cpuSeconds(children.map((c) => c.pid!)));
        const cpu = describeCpu(used, drainMs / 1000, availableParallelism());
        redisPeak = Math.max(redisPeak, await usedMemory(redis));
        const { rows: check } = await bench.db.query<{ targets: number; once: number; ok: number; expected: number; runs_ok: number }>(
          `with per as (
             select s.environment, s.list_key, s.variant, count(*) as n, bool_and(s.status = 'ok') as ok, bool_and(s.changed = $2) as expected
             from refdata.snapshots s join refdata.sync_runs r on r.id = s.run_id
             where r.slot = $1 group by 1, 2, 3)
           select count(*)::int as targets, count(*) filter (where n = 1)::int as once, count(*) filter (where ok)::int as ok,
                  count(*) filter (where expected)::int as expected,
                  (select count(*)::int from refdata.sync_runs where slot = $1 and status = 'succeeded') as runs_ok
           from per`,
          [slot, status === 'changed'],
        );
        const c = check[0]!;
        const exactlyOnce = c.targets === targets && c.once === targets;
        log(
          `P4 ${name} check: ${c.targets} of ${targets} targets have a snapshot, ${c.once} exactly one, ${c.ok} ok, ${c.expected} ${status}; ${c.runs_ok} of ${sourceCount} runs succeeded`,
        );
        if (!exactlyOnce) throw new Error(`P4 ${name}: not every target ran exactly once`);
        if (c.expected !== targets) throw new Error(`P4 ${name}: ${targets - c.expected} targets were not ${status}`);
        log(`P4 ${name} ${cpu}`);
        return { drainMs, enqueuedMs, redisPeak, cpu, postgresMsPerTarget: used.postgres === undefined ? undefined : (used.postgres * 1000) / targets };
      } finally {
        clearInterval(sampler);
      }
    };

    const first = await drainSlot('first load', 'changed');
    log(`P4 first load: ${(first.drainMs / 1000).toFixed(1)} s`);
    const afterFirst = await usedMemory(redis);
    const steady = await drainSlot('unchanged resync', 'unchanged');
    log(`P4 unchanged resync: ${(steady.drainMs / 1000).toFixed(1)} s`);
    return withConnections(bench, [
      figure('P4 first-load slot', first.drainMs / 1000, 's', 'network bound', bound, {
        target: { ratio: 3, better: 'lower' },
        notes: `every list a first load, tried in its run job (no size known yet) and applied with the source's others; ${shape}; enqueue ${Math.round(first.enqueuedMs)} ms; every target exactly once: yes; ${first.cpu}`,
      }),
      ...(first.postgresMsPerTarget === undefined
        ? []
        : [
            figure('P4 first-load Postgres CPU per target', first.postgresMsPerTarget, 'ms', 'budget', 1.5, {
              target: { ratio: 1, better: 'lower' },
              notes: `every Postgres process's CPU during the first-load slot (backends, WAL writer, checkpointer) over its ${targets} targets`,
            }),
          ]),
      figure('P4 throughput', jobs / (first.drainMs / 1000), 'jobs/s', 'network bound', jobs / bound),
      figure('P4 unchanged resync slot', steady.drainMs / 1000, 's', 'network bound', bound, {
        target: { ratio: 2, better: 'lower' },
        notes: `the hourly slot, nothing changed upstream, each run job syncing its lists (all known small by now) itself; ${shape}; ${Math.round(targets / (steady.drainMs / 1000))} targets/s; every target exactly once, unchanged: yes; ${steady.cpu}`,
      }),
      figure(
        'P4 Redis memory',
        (Math.max(first.redisPeak, steady.redisPeak) - redisBefore) / 2 ** 20,
        'MiB',
        'idle workers',
        (redisIdle - redisBefore) / 2 ** 20,
        {
          notes: `peak used_memory over both drains minus before the workers started (sampled every 250 ms); after the first drain ${((afterFirst - redisBefore) / 2 ** 20).toFixed(1)} MiB, after the second ${(((await usedMemory(redis)) - redisBefore) / 2 ** 20).toFixed(1)} MiB`,
        },
      ),
    ]);
  } finally {
    await Promise.all(children.map(stopWorker));
    await queue.close().catch(() => undefined);
    await deletePrefix(redis, prefix).catch(() => undefined);
    redis.disconnect();
    await bench.drop();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const sources = process.argv[2] ? Number(process.argv[2]) : undefined;
  runMain(async () => printFigures(await runP4(sources ? { sources } : {})));
}
