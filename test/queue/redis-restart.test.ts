// A worker whose Redis restarts (losing everything: no persistence) keeps taking jobs afterwards,
// and /readyz says so meanwhile.
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { startRedisServer, startTestWorker, testQueue, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';

const tdb = useTestDatabase();

async function runStatus(slot: string): Promise<string | undefined> {
  const { rows } = await tdb.db.query<{ status: string }>("select status from refdata.sync_runs where environment = 'restart-env' and slot = $1", [slot]);
  return rows[0]?.status;
}

describe('Redis restart', () => {
  it('the worker resumes taking jobs after its Redis restarts', async () => {
    const sb = await useSandbox();
    const redis = await startRedisServer();
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, { REDIS_URL: redis.url, REFSYNC_ENVIRONMENT: 'restart-env', REFSYNC_LISTS: 'shipment_modes' });
    const worker = await startTestWorker(config, prefix, { healthIntervalMs: 250, recreateAfterMs: 2_000 });
    const queue = testQueue(prefix, redis.url);

    await enqueueManualRuns(queue, config.sources, { slot: 'before' });
    await waitFor(async () => (await runStatus('before')) === 'succeeded', 'the run before the restart');
    expect((await worker.readiness()).ready).toBe(true);

    await redis.stop();
    const down = await waitFor(async () => {
      const report = await worker.readiness();
      return !report.ready && report;
    }, 'readiness to report Redis down');
    expect(down.checks.redis).not.toBe('ok');
    expect(down.checks.postgres).toBe('ok');

    // Stay down longer than the worker's blocking command timeout (drainDelay, 5 s): the outage
    // after which BullMQ has been known to leave the blocking connection parked for good.
    await new Promise((r) => setTimeout(r, 6_500));
    await redis.start();
    await waitFor(async () => (await worker.readiness()).ready, 'readiness after the restart', 30_000);
    await enqueueManualRuns(queue, config.sources, { slot: 'after' });
    await waitFor(async () => (await runStatus('after')) === 'succeeded', 'the run after the restart', 30_000);
  });

  it('a worker that stopped taking jobs while Redis answers is replaced', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'restart-env', REFSYNC_LISTS: 'shipment_modes' });
    const worker = await startTestWorker(config, prefix, { healthIntervalMs: 200, recreateAfterMs: 1_000 });
    const first = worker.worker;
    // Its loop ended as it has after some Redis errors (taskforcesh/bullmq#648): nothing takes jobs.
    await first.close();
    await waitFor(async () => (await worker.readiness()).checks.worker === 'not running', 'readiness to report the stopped worker');
    await waitFor(() => worker.workerGeneration === 2, 'the worker to be recreated');
    expect(worker.worker).not.toBe(first);
    await waitFor(async () => (await worker.readiness()).ready, 'readiness with the new worker');
    await enqueueManualRuns(testQueue(prefix), config.sources, { slot: 'replaced' });
    await waitFor(async () => (await runStatus('replaced')) === 'succeeded', 'a run on the new worker');
  });
});
