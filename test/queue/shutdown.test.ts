// SIGTERM to a `refsync worker` subprocess while a list is being fetched slowly (sandbox latency),
// by its run job (a list never synced is tried there first: src/queue/handlers/inline-targets.ts).
import { describe, expect, inject, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { runJobId, targetJobId } from '../../src/queue/redis/names.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { spawnCli, startTestWorker, testQueue, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';

const tdb = useTestDatabase();

async function snapshotsOf(environment: string) {
  const { rows } = await tdb.db.query<{ status: string }>('select status from refdata.snapshots where environment = $1', [environment]);
  return rows;
}

async function entriesOf(environment: string) {
  const { rows } = await tdb.db.query<{ n: number }>('select count(*)::int as n from refdata.entries where environment = $1', [environment]);
  return rows[0]!.n;
}

describe('graceful shutdown', () => {
  for (const scenario of [
    { name: 'a running job finishes before the worker exits', environment: 'stop-finish', timeoutMs: '20000', finishes: true },
    {
      name: 'a job still running at the deadline is aborted, leaves nothing, and is retried cleanly',
      environment: 'stop-abort',
      timeoutMs: '300',
      finishes: false,
    },
  ]) {
    it(scenario.name, async () => {
      const sb = await useSandbox({ latencyMs: 1_500 });
      const prefix = testQueuePrefix();
      const extra = { REFSYNC_ENVIRONMENT: scenario.environment, REFSYNC_LISTS: 'shipment_modes' };
      const proc = spawnCli(['worker'], {
        ...sandboxEnv(sb, extra),
        DATABASE_URL: tdb.url,
        REDIS_URL: inject('redisUrl'),
        REFSYNC_QUEUE_PREFIX: prefix,
        REFSYNC_HTTP_PORT: '0',
        REFSYNC_SHUTDOWN_TIMEOUT_MS: scenario.timeoutMs,
        REFSYNC_MEMORY_BUDGET_MB: '600',
        // For the "worker started" line, which tells the heap limit and the PID.
        LOG_LEVEL: 'info',
      });
      await waitFor(() => proc.output().stderr.includes('"worker started"'), 'the worker to start');
      // The worker restarted itself with an old space of half its budget, in the same process: the
      // SIGTERM below goes to the PID that was spawned.
      const started = JSON.parse(
        proc
          .output()
          .stderr.split('\n')
          .find((line) => line.includes('"worker started"'))!,
      ) as { pid: number; heapLimitMib: number };
      expect(started.pid).toBe(proc.child.pid);
      expect(started.heapLimitMib).toBeGreaterThanOrEqual(300);
      expect(started.heapLimitMib).toBeLessThan(340);
      const queue = testQueue(prefix);
      const config = workerConfig(sb, tdb.url, extra);
      await enqueueManualRuns(queue, config.sources, { slot: 'stop-1' });
      const runJob = runJobId(scenario.environment, 'stop-1');
      // The list request has reached the slow sandbox: the run job is mid-fetch.
      await waitFor(() => sb.control.requestLog().some((r) => r.path.includes('shipment-modes')) || undefined, 'the list fetch to start', 20_000);
      expect(await (await queue.getJob(runJob))!.getState()).toBe('active');

      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
      expect(await (await queue.getJob(runJob))!.getState()).toBe('completed');

      if (scenario.finishes) {
        expect((await snapshotsOf(scenario.environment)).map((s) => s.status)).toEqual(['ok']);
        expect(await queue.getJob(targetJobId(scenario.environment, 'shipment_modes', '', 'stop-1'))).toBeUndefined();
        return;
      }
      // Aborted: no snapshot, no entries, and the list waits in a target job of its own, which looks
      // for it in the run first.
      expect(await snapshotsOf(scenario.environment)).toEqual([]);
      expect(await entriesOf(scenario.environment)).toBe(0);
      const job = (await queue.getJob(targetJobId(scenario.environment, 'shipment_modes', '', 'stop-1')))!;
      // Waiting its turn: target jobs carry a priority (the n-th list of every source before the next).
      expect(['prioritized', 'wait']).toContain(await job.getState());
      expect(job.data.checkDone).toBe(true);

      // The next worker takes it up and syncs the list whole, once.
      sb.control.setLatency(0);
      await startTestWorker(config, prefix);
      if ((await job.getState()) === 'delayed') await job.promote();
      await waitFor(async () => (await job.getState()) === 'completed', 'the retried job to complete');
      expect((await snapshotsOf(scenario.environment)).map((s) => s.status)).toEqual(['ok']);
      expect(await entriesOf(scenario.environment)).toBe(sb.control.getEntries('shipment_modes').length);
      const run = await tdb.db.query<{ status: string }>('select status from refdata.sync_runs where environment = $1', [scenario.environment]);
      expect(run.rows).toEqual([{ status: 'succeeded' }]);
    });
  }
});
