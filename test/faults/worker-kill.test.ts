// Worker faults (cases 1 and 2 of issue 8): a `refsync worker` process SIGKILLed in the middle of a
// list's transaction, and right after the commit but before BullMQ marked the job complete. Each
// case runs its own worker processes on a private Redis; the kill point is found in Postgres, not
// guessed by time: the test holds a lock the worker must wait for, sees the worker's backend wait
// on it (pg_locks), and kills it there. A new worker recovers the job through BullMQ's stalled-job
// check (lock 30 s, check every 30 s: up to about a minute on its own clock). The baseline synced
// first makes every list known small, so the worker syncs them inside the run job
// (src/queue/inline-targets.ts): that is the job killed, and its re-run queues a target job per
// list, each of which looks for its list in the run first.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Queue } from 'bullmq';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { runJobId, targetJobId } from '../../src/queue/names.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { waitFor } from '../queue/helpers.ts';
import { changeList, expectNoSecretsIn, expectRerunAddsNothing, faultSource, privateWorkerQueue, stalledCount, workerProbes } from './harness.ts';
import { expectConsistentHistory, expectWholeStates, footprint } from './invariants.ts';
import { startWorkerProcess, type WorkerProcess } from './servers.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
const { runOf, runFinished, snapshotsOfRun, alertKinds, workerBackendsWaiting, noWorkerBackends, holdLock } = workerProbes(() => ({ db: t.db, url: t.url }));

/** Generous bounds: two loaded cores, and BullMQ's stalled check needs up to ~60 s by design. */
const RECOVERY_MS = 150_000;

/** A source on the sandbox with a baseline synced in process, then shipment_modes changed upstream. */
async function prepare() {
  const fx = faultSource(sb, t.db);
  expect((await fx.sync()).status).toBe('succeeded');
  const before = fx.served();
  changeList(sb, 'shipment_modes');
  const after = fx.served();
  return { fx, before, after, ...(await privateWorkerQueue(sb, fx.source, t.url)) };
}

/** SIGKILLs a worker held at the test's lock, then lets the lock go and waits for the worker's backends to end. */
async function killHeldWorker(worker: WorkerProcess, locker: { release(): Promise<void> }): Promise<void> {
  await worker.kill();
  await locker.release();
  await waitFor(noWorkerBackends, 'the killed worker backends to end', 60_000);
  expectNoSecretsIn(worker);
}

/** The run closes at its last job's refresh, a moment before BullMQ marks that job complete. */
async function jobCompleted(queue: Queue, jobId: string): Promise<void> {
  await waitFor(async () => (await (await queue.getJob(jobId))!.getState()) === 'completed', `job ${jobId} to complete`, RECOVERY_MS, 100);
}

describe('1. worker SIGKILLed in the middle of a list transaction', () => {
  it('the transaction rolls back; the stalled job is retried by a new worker to the same final state; no duplicate alert', async () => {
    const { fx, before, after, redis, prefix, queue, env } = await prepare();
    const slot = 'kill-mid-tx';
    const jobId = targetJobId(fx.source.name, 'shipment_modes', '', slot);
    const runJob = runJobId(fx.source.name, slot);
    const footprintBefore = await footprint(t.db, fx.source.environment);

    // Writes to the alert outbox wait for this lock: the changed list's transaction has written its
    // snapshot, closed and opened its entries and written its change rows when it blocks here.
    const locker = await holdLock('lock table refdata.alerts in share mode');
    const w1 = await startWorkerProcess(env);
    await enqueueManualRuns(queue, [fx.source], { slot });
    await waitFor(
      // (the query, not just the table: the alert dispatcher of the worker waits on the table too)
      async () => (await workerBackendsWaiting("a.query ilike '%insert into refdata.alerts%'")) > 0,
      'the worker transaction to wait on the alerts table',
      60_000,
    );
    await killHeldWorker(w1, locker);

    // Rolled back: nothing of the changed list's transaction is left; the job is still active in Redis.
    const run = (await runOf(fx.source, slot))!;
    expect(run.status).toBe('running');
    expect((await snapshotsOfRun(run.id)).filter((s) => s.list_key === 'shipment_modes')).toEqual([]);
    const { changes, alerts, applied } = await footprint(t.db, fx.source.environment);
    expect({ changes, alerts, applied }).toEqual({ changes: footprintBefore.changes, alerts: footprintBefore.alerts, applied: footprintBefore.applied });
    const left = await expectWholeStates(t.db, fx.source, [before]);
    expect([...left.values()].every((i) => i === 0)).toBe(true);
    expect(await (await queue.getJob(runJob))!.getState(), 'the run job synced the list itself').toBe('active');
    expect(await queue.getJob(jobId)).toBeUndefined();

    // A new worker recovers the stalled run job, whose target job applies the whole new state, once.
    const w2 = await startWorkerProcess(env);
    const done = await runFinished(fx.source, slot, 'the run to finish after the stalled job is recovered', RECOVERY_MS);
    expect(done.status).toBe('succeeded');
    await jobCompleted(queue, jobId);
    expect(await stalledCount(redis.url, prefix, runJob), 'recovered by the stalled-job check').toBe(1);
    expect((await queue.getJob(jobId))!.returnvalue).toMatchObject({ status: 'changed' });
    const changed = (await snapshotsOfRun(run.id)).filter((s) => s.list_key === 'shipment_modes');
    expect(changed.map((s) => [s.status, s.changed])).toEqual([['ok', true]]);
    expect(await alertKinds(changed[0]!.id)).toEqual(['added', 'modified']);
    const matched = await expectWholeStates(t.db, fx.source, [after]);
    expect([...matched.values()].every((i) => i === 0)).toBe(true);
    await expectConsistentHistory(t.db, fx.source);

    expect(await w2.stop()).toBe(0);
    expectNoSecretsIn(w2);
    await expectRerunAddsNothing(t.db, fx);
  }, 300_000);
});

describe('2. worker SIGKILLed after the commit, before the job is marked complete', () => {
  it('the re-run of the run job queues its lists, and each target job finds its list committed and skips it: no new snapshot, change or alert', async () => {
    const { fx, after, prefix, redis, queue, env } = await prepare();
    const slot = 'kill-after-commit';
    const jobId = targetJobId(fx.source.name, 'shipment_modes', '', slot);
    const runJob = runJobId(fx.source.name, slot);
    const targets = fx.source.lists.length;

    // Slow upstream: the run record exists seconds before any list is fetched and applied.
    sb.control.setLatency(3_000);
    try {
      const w1 = await startWorkerProcess(env);
      await enqueueManualRuns(queue, [fx.source], { slot });
      const run = await waitFor(() => runOf(fx.source, slot), 'the run record', 60_000, 50);
      // A run job counts the lists it synced itself once, after the last: refdata.advance_run, through
      // refdata.run_progress, which locks the run row `for no key update`. This lock lets every
      // list's commit through (the changed one's apply, the unchanged ones' record_unchanged_lists: their
      // foreign-key checks take key-share locks, which `for no key update` allows) and stops the run
      // job right there, before it returns to BullMQ.
      const locker = await holdLock('select id from refdata.sync_runs where id = $1 for no key update', [run.id]);
      expect(await snapshotsOfRun(run.id), 'no list applied before the run record was locked').toEqual([]);
      await waitFor(
        async () => (await snapshotsOfRun(run.id)).length === targets && (await workerBackendsWaiting("a.query ilike '%refdata.advance_run(%'")) === 1,
        'every list committed and the run job waiting to update the run record',
        60_000,
      );
      await killHeldWorker(w1, locker);

      // Committed: the new state, its changes and alerts are there; the run record was never refreshed.
      expect((await runOf(fx.source, slot))!.status).toBe('running');
      const matched = await expectWholeStates(t.db, fx.source, [after]);
      expect([...matched.values()].every((i) => i === 0)).toBe(true);
      const committed = await footprint(t.db, fx.source.environment);
      const snapshots = await snapshotsOfRun(run.id);
      const changed = snapshots.filter((s) => s.changed);
      expect(changed.map((s) => s.list_key)).toEqual(['shipment_modes']);
      expect(await alertKinds(changed[0]!.id)).toEqual(['added', 'modified']);
      expect(await (await queue.getJob(runJob))!.getState(), 'the run job synced the lists itself').toBe('active');

      sb.control.setLatency(0);
      const w2 = await startWorkerProcess(env);
      const done = await runFinished(fx.source, slot, 'the run to finish after the stalled jobs are recovered', RECOVERY_MS);
      expect(done.status).toBe('succeeded');
      await jobCompleted(queue, jobId);
      const job = (await queue.getJob(jobId))!;
      expect(await stalledCount(redis.url, prefix, runJob), 'recovered by the stalled-job check').toBe(1);
      expect(job.returnvalue, 'the target job saw the committed snapshot and skipped the list').toMatchObject({ skipped: true });
      // The unchanged lists were committed before the kill too: their target jobs skipped them as well.
      for (const list of fx.source.lists) {
        await jobCompleted(queue, targetJobId(fx.source.name, list, '', slot));
        const returned = (await queue.getJob(targetJobId(fx.source.name, list, '', slot)))!.returnvalue;
        expect(returned, list).toMatchObject({ status: 'done-before', skipped: true });
      }
      const recovered = await snapshotsOfRun(run.id);
      expect(recovered).toEqual(snapshots);
      expect(
        recovered
          .filter((s) => !s.changed)
          .map((s) => s.list_key)
          .sort(),
      ).toEqual(fx.source.lists.filter((l) => l !== 'shipment_modes').sort());
      expect(recovered.every((s) => s.status === 'ok')).toBe(true);
      expect(await footprint(t.db, fx.source.environment)).toEqual(committed);
      await expectConsistentHistory(t.db, fx.source);
      expect(await w2.stop()).toBe(0);
      expectNoSecretsIn(w2);
      await expectRerunAddsNothing(t.db, fx);
    } finally {
      sb.control.setLatency(0);
    }
  }, 300_000);
});
