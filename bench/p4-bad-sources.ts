// P4 isolation: 100 sources on 2 worker processes (BullMQ), of which one answers every list with
// 429 and `Retry-After: 30` and one answers every request 10 s late. The figure is the time the
// other 98 sources' slot takes to drain; the baseline is the same 98 sources' slot with no bad
// source beside them, measured in the same run (on fresh environments, so all are first loads).
// The bad sources are queued first, the worst case for the others.
//
//   node bench/p4-bad-sources.ts
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/load.ts';
import { enqueueManualRuns, QUEUE_NAME } from '../src/queue/index.ts';
import { SANDBOX_MACHINE_ACCOUNT } from '../src/sandbox/index.ts';
import {
  createBenchDatabase,
  figure,
  machineLine,
  printFigures,
  redisUrl,
  runMain,
  startBenchSandbox,
  type BenchDatabase,
  type BenchSandbox,
  type Figure,
  withConnections,
} from './lib.ts';
import { deletePrefix, startWorker, stopWorker } from './p4-many-sources.ts';

const GOOD_SOURCES = 98;
const WORKERS = 2;
const CONCURRENCY = 16;
const LATENCY_MS = 20;
const LISTS = 'shipment_modes,equipment_types,accessorials,piece_types,document_types';

interface Phase {
  name: string;
  /** Environments whose runs must close for the slot to count as drained. */
  good: string[];
  sources: Array<Record<string, string>>;
}

function source(environment: string, sb: BenchSandbox): Record<string, string> {
  return { environment, baseUrl: sb.url, caFile: sb.caFile, email: SANDBOX_MACHINE_ACCOUNT.email, password: SANDBOX_MACHINE_ACCOUNT.password };
}

/** Starts the workers on the phase's sources, enqueues one slot and times until the good sources' runs close. */
async function drain(phase: Phase, bench: BenchDatabase, dir: string, redis: Redis, log: (line: string) => void): Promise<number> {
  const prefix = `refsync-bench-${randomBytes(4).toString('hex')}`;
  const configFile = join(dir, `${phase.name}.json`);
  await writeFile(configFile, JSON.stringify({ sources: phase.sources }));
  const env: Record<string, string> = {
    REFSYNC_CONFIG: configFile,
    REFSYNC_LISTS: LISTS,
    REFSYNC_SCHEDULE: '0 0 1 1 *',
    REFSYNC_CONCURRENCY: String(CONCURRENCY),
    DATABASE_URL: bench.url,
    REDIS_URL: redisUrl(),
    LOG_LEVEL: 'silent',
  };
  const config = loadConfig(env);
  const children: ChildProcess[] = [];
  const queue = new Queue(QUEUE_NAME, { connection: redis, prefix });
  try {
    for (let w = 0; w < WORKERS; w++) children.push(await startWorker({ ...env, REFSYNC_HTTP_PORT: '0' }, prefix));
    const slot = `bench-${phase.name}-${Date.now()}`;
    const started = performance.now();
    await enqueueManualRuns(queue, config.sources, { slot });
    const deadline = Date.now() + 10 * 60_000;
    for (;;) {
      const { rows } = await bench.db.query<{ closed: number; failed: number }>(
        `select count(*) filter (where status <> 'running')::int as closed, count(*) filter (where status not in ('running', 'succeeded'))::int as failed
         from refdata.sync_runs where slot = $1 and environment = any($2::text[])`,
        [slot, phase.good],
      );
      if (rows[0]!.failed > 0) throw new Error(`P4 isolation (${phase.name}): ${rows[0]!.failed} good runs did not succeed`);
      if (rows[0]!.closed === phase.good.length) break;
      if (Date.now() > deadline) throw new Error(`P4 isolation (${phase.name}): slot not drained in time (${rows[0]!.closed} of ${phase.good.length})`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const drainMs = performance.now() - started;
    log(`P4 isolation ${phase.name}: ${phase.good.length} good sources drained in ${(drainMs / 1000).toFixed(2)} s (${phase.sources.length} sources in all)`);
    return drainMs;
  } finally {
    await Promise.all(children.map(stopWorker));
    await queue.close().catch(() => undefined);
    await deletePrefix(redis, prefix).catch(() => undefined);
  }
}

export async function runP4BadSources(log: (line: string) => void = console.log): Promise<Figure[]> {
  const good = await startBenchSandbox({ latencyMs: LATENCY_MS });
  const limited = await startBenchSandbox({ latencyMs: LATENCY_MS });
  const slow = await startBenchSandbox({ latencyMs: 10_000 });
  const bench = await createBenchDatabase({ poolSize: 4 });
  const dir = await mkdtemp(join(tmpdir(), 'refsync-bench-p4-bad-'));
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
  try {
    log(await machineLine(bench.db));
    await limited.control('setFaults', { rateLimit: { count: 1_000_000, retryAfter: '30' }, paths: LISTS.split(',') });
    const goodOf = (phase: string) => Array.from({ length: GOOD_SOURCES }, (_, i) => `${phase}-good-${String(i).padStart(3, '0')}`);
    const withBad = (round: number): Phase => ({
      name: `with-bad-${round}`,
      good: goodOf(`with-bad-${round}`),
      sources: [source(`with-bad-${round}-429`, limited), source(`with-bad-${round}-slow`, slow), ...goodOf(`with-bad-${round}`).map((e) => source(e, good))],
    });
    const alone = (round: number): Phase => ({
      name: `alone-${round}`,
      good: goodOf(`alone-${round}`),
      sources: goodOf(`alone-${round}`).map((e) => source(e, good)),
    });
    // In the order ABBA, so that a machine warming up or slowing down over the run favours neither.
    const withBadMs = await drain(withBad(1), bench, dir, redis, log);
    let aloneMs = await drain(alone(1), bench, dir, redis, log);
    aloneMs = (aloneMs + (await drain(alone(2), bench, dir, redis, log))) / 2;
    const withBadMean = (withBadMs + (await drain(withBad(2), bench, dir, redis, log))) / 2;
    const limitedLists = (await limited.requestLog()).filter((r) => r.path !== '/v2/auth/token/');
    return withConnections(bench, [
      figure('P4 isolation: 98 sources beside a 429 one and a 10 s one', withBadMean / 1000, 's', 'the same 98 alone', aloneMs / 1000, {
        target: { ratio: 1.2, better: 'lower' },
        notes: `mean of 2 drains each, in the order ABBA; ${WORKERS} workers x concurrency ${CONCURRENCY}, ${LISTS.split(',').length} lists per source, latency ${LATENCY_MS} ms; the 429 source was asked ${limitedLists.length} times for a list`,
      }),
    ]);
  } finally {
    redis.disconnect();
    await bench.drop();
    await Promise.all([good.close(), limited.close(), slow.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) runMain(async () => printFigures(await runP4BadSources()));
