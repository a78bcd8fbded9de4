// refsync on a real Redis Cluster: six redis-server processes of the test's own, three
// primaries with one replica each, a password that only REDIS_URL gives (its host is not used).
// A `refsync worker` process and `refsync trigger` run a sync through it (its scheduler installed,
// the source gate's slots held); status, the dashboard, readiness and metrics answer; the queue's
// keys share the slot of `{prefix}`. Then the primary serving that
// slot is SIGKILLed: once its replica has taken over, the next triggered run completes as
// succeeded and its change is recorded exactly once.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/types.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { runCli, waitFor, testQueuePrefix } from '../queue/helpers.ts';
import { changeList, expectNoSecretsIn, faultSource, workerEnv, workerProbes } from './harness.ts';
import { expectConsistentHistory, expectWholeStates } from './invariants.ts';
import { startRedisCluster } from './redis-cluster.ts';
import { startWorkerProcess } from './servers.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
const { runFinished, snapshotsOfRun } = workerProbes(() => ({ db: t.db, url: t.url }));

async function changeRowsOf(snapshotId: number): Promise<Array<{ entry_key: string; change: string }>> {
  const { rows } = await t.db.query<{ entry_key: string; change: string }>(
    'select entry_key, change from refdata.entry_changes where snapshot_id = $1 order by entry_key, change',
    [snapshotId],
  );
  return rows;
}

async function triggered(env: Record<string, string>, source: SourceConfig, slot: string) {
  const trigger = await runCli(['trigger', '--slot', slot], env, 60_000);
  expect(trigger.code, trigger.stderr).toBe(0);
  return runFinished(source, slot, `run ${slot} to finish`, 120_000);
}

describe('Redis Cluster', () => {
  it('worker, trigger, status, readiness and metrics on a cluster; after the primary of the queue slot is killed, the next run succeeds and records its change once', async () => {
    const cluster = await startRedisCluster();
    const prefix = testQueuePrefix();
    const fx = faultSource(sb, t.db);
    const env = workerEnv(sb, fx.source, {
      DATABASE_URL: t.url,
      // Only the credentials of REDIS_URL are used; the nodes come from REDIS_CLUSTER_NODES.
      REDIS_URL: `redis://:${cluster.password}@127.0.0.1:1`,
      REDIS_CLUSTER_NODES: cluster.seeds,
      REFSYNC_QUEUE_PREFIX: prefix,
      // The source gate's job slots (a Lua script on its own keys) in use too.
      REFSYNC_SOURCE_MAX_JOBS: '2',
    });
    const worker = await startWorkerProcess(env);

    expect((await triggered(env, fx.source, 'before')).status).toBe('succeeded');
    const ready = await fetch(`${worker.httpUrl}/readyz`);
    expect(ready.status, await ready.clone().text()).toBe(200);
    expect(await (await fetch(`${worker.httpUrl}/metrics`)).text()).toMatch(/^refsync_queue_jobs\{[^}]*state="completed"[^}]*\} [1-9]/m);
    const status = await runCli(['status', '--json'], env, 60_000);
    expect(status.code, status.stderr).toBe(0);
    const queueState = (JSON.parse(status.stdout) as { queue: { counts?: Record<string, number>; schedulers?: Array<{ source: string }>; error?: string } })
      .queue;
    expect(queueState.error).toBeUndefined();
    expect(queueState.counts?.completed).toBeGreaterThan(0);
    expect(queueState.schedulers?.map((s) => s.source)).toEqual([fx.source.name]);
    const dashboard = await fetch(`${worker.httpUrl}/admin/queues/api/queues`);
    expect(dashboard.status).toBe(200);
    const board = (await dashboard.json()) as { queues: Array<{ name: string; counts?: Record<string, number> }> };
    expect(board.queues.map((q) => q.name)).toEqual(['sync']);

    // Every key of the queue is in the slot of the hash-tagged prefix; that primary goes.
    const slot = await cluster.keySlot(`{${prefix}}`);
    const primary = await cluster.primaryOf(slot);
    await primary.kill();
    const promoted = await waitFor(
      async () => {
        const now = await cluster.primaryOf(slot).catch(() => undefined);
        return now && now.id !== primary.id && now;
      },
      'a replica to take over the queue slot',
      90_000,
      200,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}; killed ${primary.port}; cluster: ${await cluster.describe()}`);
    });
    await cluster.healthy();
    expect(promoted.port).not.toBe(primary.port);

    changeList(sb, 'shipment_modes');
    const after = fx.served();
    const run = await triggered(env, fx.source, 'after-failover');
    expect(run.status).toBe('succeeded');
    const changed = (await snapshotsOfRun(run.id)).filter((s) => s.list_key === 'shipment_modes');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.changed).toBe(true);
    // changeList modifies one entry and adds one: two change rows, each once.
    const rows = await changeRowsOf(changed[0]!.id);
    expect(rows.map((r) => r.change).sort()).toEqual(['added', 'modified']);
    const matched = await expectWholeStates(t.db, fx.source, [after]);
    expect([...matched.values()].every((i) => i === 0)).toBe(true);
    await expectConsistentHistory(t.db, fx.source);
    // Ready again on the new primary (its blocking connection followed the failover).
    await waitFor(async () => (await fetch(`${worker.httpUrl}/readyz`)).status === 200, 'the worker to be ready after the failover', 60_000, 500);

    expect(await worker.stop()).toBe(0);
    expectNoSecretsIn(worker);
    expect(`${worker.output().stdout}${worker.output().stderr}`).not.toContain(cluster.password);
  }, 300_000);
});
