// Each source is its own failure domain on the shared queue, across worker processes: a source
// rate limited with a long Retry-After, and one whose every answer is slow, do not hold up a
// third. Real BullMQ, two `refsync worker` processes, three sandboxes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { startWorkerProcess } from '../faults/servers.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { SANDBOX_MACHINE_ACCOUNT, useSandbox } from '../helpers/sandbox.ts';
import { onCleanup, testQueue, waitFor, testQueuePrefix } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const tdb = useTestDatabase();
const LISTS = ['shipment_modes', 'equipment_types', 'accessorials', 'piece_types'];

async function runsOf(slot: string) {
  const { rows } = await tdb.db.query<{ source: string; status: string }>('select source, status from refdata.sync_runs where slot = $1 order by source', [
    slot,
  ]);
  return Object.fromEntries(rows.map((r) => [r.source, r.status]));
}

async function snapshotsOf(source: string) {
  const { rows } = await tdb.db.query<{ status: string }>(
    'select s.status from refdata.snapshots s join refdata.sync_runs r on r.id = s.run_id where r.source = $1',
    [source],
  );
  return rows.map((r) => r.status);
}

describe('sources as failure domains (two worker processes)', () => {
  it('a 429 with Retry-After: 30 cools down that source only, for both workers; a slow source takes no more than its share of the slots', async () => {
    const [slow, limited, calm] = await Promise.all([useSandbox(), useSandbox(), useSandbox()]);
    // Every answer of `slow` takes 10 s: without a per-source limit its jobs would take all four
    // slots (2 workers x 2) for 20 s (login, then the list), and `calm` would wait behind them.
    slow.control.setLatency(10_000);
    limited.control.setFaults({ rateLimit: { count: 1000, retryAfter: '30' }, paths: LISTS });
    const dir = testTempDir('refsync-isolation');
    const file = join(dir, 'sources.json');
    const source = (name: string, sb: typeof calm) => ({
      name,
      environment: `iso-${name}`,
      baseUrl: sb.url,
      caFile: sb.caFile,
      email: SANDBOX_MACHINE_ACCOUNT.email,
      password: SANDBOX_MACHINE_ACCOUNT.password,
    });
    // In this order the slow source's jobs are queued first, the calm one's last.
    writeFileSync(file, JSON.stringify({ sources: [source('slow', slow), source('limited', limited), source('calm', calm)] }));
    const prefix = testQueuePrefix();
    const env = {
      REFSYNC_CONFIG: file,
      REFSYNC_LISTS: LISTS.join(','),
      REFSYNC_SCHEDULE: '0 0 1 1 *',
      REFSYNC_CONCURRENCY: '2',
      DATABASE_URL: tdb.url,
      REDIS_URL: inject('redisUrl'),
      REFSYNC_QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
    };
    const config = loadConfig(env);
    expect(config.sources.map((s) => s.maxConcurrentJobs)).toEqual([2, 2, 2]);
    const workers = await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
    onCleanup(() => Promise.all(workers.map((w) => w.kill())));
    const queue = testQueue(prefix);
    await enqueueManualRuns(queue, config.sources, { slot: 'iso-1' });
    const limitedDelayed = async () => (await queue.getJobs(['delayed'])).filter((j) => j.name === 'target' && j.data.source === 'limited');

    await waitFor(async () => (await runsOf('iso-1')).calm === 'succeeded', 'the calm source to sync', 60_000, 100);
    // The calm source finished while the slow one had not synced a single list yet.
    expect(await snapshotsOf('slow')).toEqual([]);
    expect((await runsOf('iso-1')).slow).toBe('running');

    // The rate-limited source's jobs wait, delayed, without a failed attempt or a failure recorded.
    await waitFor(async () => (await limitedDelayed()).length === LISTS.length, 'its jobs to be delayed', 20_000, 100);
    const delayed = await limitedDelayed();
    expect(delayed.map((j) => j.attemptsMade)).toEqual(LISTS.map(() => 0));
    expect(await snapshotsOf('limited')).toEqual([]);
    expect((await runsOf('iso-1')).limited).toBe('running');
    // The cool-down is one key in Redis, seen by both workers: the service was asked at most once
    // per slot the source may hold, not once per job or per worker.
    const redis = new Redis(inject('redisUrl'));
    try {
      expect(await redis.pttl(`${prefix}:refsync:cooldown:limited`)).toBeGreaterThan(20_000);
    } finally {
      redis.disconnect();
    }
    const listRequests = limited.control.requestLog().filter((r) => r.path !== '/v2/auth/token/');
    expect(listRequests.every((r) => r.status === 429)).toBe(true);
    expect(listRequests.length).toBeGreaterThanOrEqual(1);
    expect(listRequests.length).toBeLessThanOrEqual(2);
  }, 120_000);
});
