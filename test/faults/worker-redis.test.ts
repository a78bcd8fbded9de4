// Worker faults around Redis, each on a private redis-server (the shared
// one is never stopped, flushed or reconfigured) and `refsync worker` as a child process:
//  4. Redis stopped for 5 s and for 15 s (its data kept: append-only file) while a list is in
//     flight: the worker resumes by itself, the in-flight run and a run triggered afterwards complete;
//  5. Redis flushed, or restarted empty: what happens to the schedulers;
//  6. an evicting Redis (allkeys-lru): the worker refuses to start, with one line.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import type { SourceConfig } from '../../src/config/types.ts';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { runJobId } from '../../src/queue/redis/names.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { SANDBOX_MACHINE_ACCOUNT, useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { runCli, startRedisServer, testQueue, waitFor, testQueuePrefix } from '../queue/helpers.ts';
import { changeList, expectNoSecretsIn, faultSource, uniqueEnvironment, workerEnv, workerProbes } from './harness.ts';
import { expectConsistentHistory, expectWholeStates } from './invariants.ts';
import { startWorkerProcess } from './servers.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
const { runOf } = workerProbes(() => ({ db: t.db, url: t.url }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function finished(source: SourceConfig, slot: string, timeoutMs = 90_000) {
  return waitFor(
    async () => {
      const r = await runOf(source, slot);
      return r && r.status !== 'running' && r;
    },
    `run ${slot} of ${source.name} to finish`,
    timeoutMs,
    250,
  );
}

describe('4. Redis stopped, then back with its data', () => {
  for (const outageMs of [5_000, 15_000]) {
    it(`${outageMs / 1000} s outage with a list in flight: the worker resumes by itself; the in-flight and a later triggered run complete`, async () => {
      const dir = testTempDir('refsync-faults-redis');
      const redis = await startRedisServer(['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir]);
      const prefix = testQueuePrefix();
      const queue = testQueue(prefix, redis.url);
      const fx = faultSource(sb, t.db);
      const env = workerEnv(sb, fx.source, { DATABASE_URL: t.url, REDIS_URL: redis.url, REFSYNC_QUEUE_PREFIX: prefix });
      const w = await startWorkerProcess(env);
      await enqueueManualRuns(queue, [fx.source], { slot: 'before' });
      expect((await finished(fx.source, 'before')).status).toBe('succeeded');
      changeList(sb, 'shipment_modes');
      const after = fx.served();

      // A run whose list fetch is slow is in flight when Redis goes away: its lists are known small
      // after the first run, so its run job syncs them itself (src/queue/handlers/inline-targets.ts).
      sb.control.setLatency(2_000);
      try {
        const fetched = sb.control.requestLog().length;
        await enqueueManualRuns(queue, [fx.source], { slot: 'during' });
        const inFlight = runJobId(fx.source.name, 'during');
        await waitFor(async () => (await (await queue.getJob(inFlight))?.getState()) === 'active', 'the run job to be active', 60_000);
        await waitFor(() => sb.control.requestLog().length > fetched, 'a request of the run to reach the sandbox', 60_000);
        await redis.stop();
        await sleep(outageMs);
        await redis.start();
      } finally {
        sb.control.setLatency(0);
      }

      expect((await finished(fx.source, 'during')).status).toBe('succeeded');
      // `refsync trigger` as an operator would run it once Redis is back.
      const trigger = await runCli(['trigger', '--slot', 'after'], env, 60_000);
      expect(trigger.code, trigger.stderr).toBe(0);
      expect((await finished(fx.source, 'after')).status).toBe('succeeded');
      // Its data was kept: the source's scheduler is still there, once.
      expect((await queue.getJobSchedulers(0, -1, true)).map((s) => s.id ?? s.key)).toEqual([`source-${fx.source.name}`]);

      const matched = await expectWholeStates(t.db, fx.source, [after]);
      expect([...matched.values()].every((i) => i === 0)).toBe(true);
      await expectConsistentHistory(t.db, fx.source);
      expect(await w.stop()).toBe(0);
      expectNoSecretsIn(w);
    }, 300_000);
  }
});

describe('5. Redis flushed or restarted empty', () => {
  /** Two sources on the sandbox in one REFSYNC_CONFIG file, scheduled every 10 s. */
  function twoSources(redisUrl: string, prefix: string) {
    const dir = testTempDir('refsync-faults-sources');
    const file = join(dir, 'sources.json');
    const names = [uniqueEnvironment('sched-a'), uniqueEnvironment('sched-b')];
    writeFileSync(
      file,
      JSON.stringify({
        sources: names.map((name) => ({ name, environment: name, email: SANDBOX_MACHINE_ACCOUNT.email, password: SANDBOX_MACHINE_ACCOUNT.password })),
      }),
    );
    const env = {
      ...sandboxEnv(sb, { REFSYNC_LISTS: 'shipment_modes', REFSYNC_SCHEDULE: '*/10 * * * * *' }),
      REFSYNC_CONFIG: file,
      DATABASE_URL: t.url,
      REDIS_URL: redisUrl,
      REFSYNC_QUEUE_PREFIX: prefix,
    };
    return { env, sources: loadConfig(env).sources };
  }

  async function schedulerIds(queue: ReturnType<typeof testQueue>): Promise<string[]> {
    return (await queue.getJobSchedulers(0, -1, true)).map((s) => s.id ?? s.key).sort();
  }

  /** The id of the latest scheduled run of the source that succeeded (0 when none). */
  async function lastScheduled(source: SourceConfig): Promise<number> {
    const { rows } = await t.db.query<{ id: number | null }>(
      "select max(id) as id from refdata.sync_runs where source = $1 and trigger = 'schedule' and status = 'succeeded'",
      [source.name],
    );
    return Number(rows[0]?.id ?? 0);
  }

  async function scheduledRunAfter(sources: SourceConfig[], after: number[]): Promise<number[]> {
    return waitFor(
      async () => {
        const ids = await Promise.all(sources.map(lastScheduled));
        return ids.every((id, i) => id > after[i]!) && ids;
      },
      'a scheduled run of every source',
      90_000,
      250,
    );
  }

  async function flush(url: string): Promise<void> {
    const client = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      await client.flushall();
    } finally {
      client.disconnect();
    }
  }

  // The worker's watchdog checks every few seconds that each source's scheduler exists in Redis
  // and reinstalls missing ones, so a Redis that lost its data does not end scheduled syncs.
  it('flushed: the running worker reinstalls one scheduler per source by itself (within 30 s)', async () => {
    const redis = await startRedisServer();
    const prefix = testQueuePrefix();
    const queue = testQueue(prefix, redis.url);
    const { env, sources } = twoSources(redis.url, prefix);
    const w = await startWorkerProcess(env);
    try {
      await scheduledRunAfter(sources, [0, 0]);
      await flush(redis.url);
      expect(await schedulerIds(queue)).toEqual([]);
      await waitFor(async () => (await schedulerIds(queue)).length === 2, 'the schedulers to come back without a restart', 30_000, 500);
    } finally {
      await w.stop();
    }
  }, 240_000);

  it('restarted empty: the worker keeps taking triggered runs; after a worker restart the schedulers are back, one per source, and scheduled runs resume', async () => {
    const redis = await startRedisServer();
    const prefix = testQueuePrefix();
    const queue = testQueue(prefix, redis.url);
    const { env, sources } = twoSources(redis.url, prefix);
    const w1 = await startWorkerProcess(env);
    const first = await scheduledRunAfter(sources, [0, 0]);
    // Between two slots (every 10 s), so no run is in flight when the data goes.
    await waitFor(
      async () => {
        const { rows } = await t.db.query("select 1 from refdata.sync_runs where source = any($1) and status = 'running'", [sources.map((s) => s.name)]);
        return rows.length === 0;
      },
      'no run in flight',
      30_000,
      100,
    );
    // A key of the test's own shows the data is gone. (Asking for the schedulers instead would race
    // the running worker's watchdog, which reinstalls them within seconds of Redis coming back.)
    const probe = new Redis(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    probe.on('error', () => undefined);
    await probe.connect();
    await probe.set('refsync-test:before-restart', '1');
    probe.disconnect();
    await redis.stop();
    await redis.start();
    const after = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await after.get('refsync-test:before-restart'), 'Redis came back empty').toBeNull();
    } finally {
      after.disconnect();
    }

    // The running worker reconnects and takes triggered runs.
    const trigger = await runCli(['trigger', '--slot', 'after-empty'], env, 60_000);
    expect(trigger.code, trigger.stderr).toBe(0);
    for (const s of sources) expect((await finished(s, 'after-empty')).status).toBe('succeeded');
    expect(await w1.stop()).toBe(0);

    const w2 = await startWorkerProcess(env);
    expect(await schedulerIds(queue)).toEqual(sources.map((s) => `source-${s.name}`).sort());
    await scheduledRunAfter(sources, first);

    // Stop the schedules, let runs in flight end, then check every source's history.
    for (const s of sources) await queue.removeJobScheduler(`source-${s.name}`);
    await waitFor(
      async () => {
        const { rows } = await t.db.query("select 1 from refdata.sync_runs where source = any($1) and status = 'running'", [sources.map((s) => s.name)]);
        return rows.length === 0;
      },
      'the runs in flight to end',
      60_000,
      250,
    );
    expect(await w2.stop()).toBe(0);
    for (const s of sources) await expectConsistentHistory(t.db, s);
    expectNoSecretsIn(w1);
    expectNoSecretsIn(w2);
  }, 300_000);
});

describe('6. an evicting Redis', () => {
  it('refsync worker refuses allkeys-lru: exit 2, one line naming maxmemory-policy, nothing written to Redis', async () => {
    const redis = await startRedisServer(['--maxmemory-policy', 'allkeys-lru']);
    const prefix = testQueuePrefix();
    const fx = faultSource(sb, t.db);
    const result = await runCli(
      ['worker'],
      workerEnv(sb, fx.source, { DATABASE_URL: t.url, REDIS_URL: redis.url, REFSYNC_QUEUE_PREFIX: prefix, REFSYNC_HTTP_PORT: '0' }),
      60_000,
    );
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/maxmemory-policy/);
    expect(lines[0]).toMatch(/allkeys-lru/);
    expect(lines[0]).toMatch(/noeviction/);
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await client.keys(`${prefix}:*`), 'no scheduler or job was written').toEqual([]);
    } finally {
      client.disconnect();
    }
  });
});
