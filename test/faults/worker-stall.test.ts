// Worker fault: a job that stalls past its BullMQ lock while it is inside the
// list's transaction. The worker takes no lockDuration/stalledInterval option, so the first worker
// process is frozen with SIGSTOP (no lock renewal) inside its transaction; a second worker process
// recovers the job as stalled and takes it; then the first is resumed with SIGCONT. The pipeline's
// per-target advisory lock and hash compare must make one commit of the change out of the two. The
// baseline makes every list known small, so the first worker syncs them inside the run job
// (src/queue/handlers/inline-targets.ts): the run job stalls, and its re-run queues the target jobs.
import { beforeAll, describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { runJobId, targetJobId } from '../../src/queue/redis/names.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { onCleanup, waitFor } from '../queue/helpers.ts';
import { changeList, expectNoSecretsIn, expectRerunAddsNothing, faultSource, privateWorkerQueue, stalledCount, workerProbes } from './harness.ts';
import { expectConsistentHistory, expectWholeStates, footprint } from './invariants.ts';
import { startWorkerProcess } from './servers.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
const { runFinished, snapshotsOfRun, alertKinds, workerBackendsWaiting, holdLock } = workerProbes(() => ({ db: t.db, url: t.url }));

describe('3. a job stalls past its lock; a second worker takes it', () => {
  it('one commit of the change: one changed snapshot, one set of change rows and alerts; the other attempt finds it unchanged', async () => {
    const fx = faultSource(sb, t.db);
    expect((await fx.sync()).status).toBe('succeeded');
    const baseline = await footprint(t.db, fx.source.environment);
    changeList(sb, 'shipment_modes');
    const after = fx.served();
    const { redis, prefix, queue, env } = await privateWorkerQueue(sb, fx.source, t.url);
    const slot = 'stalled';
    const jobId = targetJobId(fx.source.name, 'shipment_modes', '', slot);

    // Hold the first worker's transaction at its alert write, then freeze the whole process there.
    const locker = await holdLock('lock table refdata.alerts in share mode');
    const w1 = await startWorkerProcess(env);
    const resume = () => {
      if (w1.child.exitCode === null && w1.child.signalCode === null) process.kill(w1.pid, 'SIGCONT');
    };
    onCleanup(async () => resume());
    await enqueueManualRuns(queue, [fx.source], { slot });
    await waitFor(
      async () => (await workerBackendsWaiting("a.query ilike '%insert into refdata.alerts%'")) > 0,
      'the first worker transaction to wait on the alert outbox',
      60_000,
    );
    process.kill(w1.pid, 'SIGSTOP');
    // Its backend finishes the insert and then idles in the open transaction, holding the target's
    // advisory lock, while the process renews no BullMQ lock.
    await locker.release();

    // The second worker recovers the job once the lock has expired (30 s) and its stalled check
    // ran twice (every 30 s); its attempt fetches the list and waits for the target's advisory lock.
    const w2 = await startWorkerProcess(env);
    await waitFor(
      async () => (await workerBackendsWaiting("l.locktype = 'advisory'")) > 0,
      'the second worker to take the stalled job and wait on the target lock',
      150_000,
      100,
    );
    expect(await stalledCount(redis.url, prefix, runJobId(fx.source.name, slot)), 'the run job was recovered as stalled').toBe(1);
    // The first worker wakes up and commits; the second then sees the committed hash.
    resume();

    const run = await runFinished(fx.source, slot, 'the run to finish', 90_000);
    expect(run.status).toBe('succeeded');
    await waitFor(async () => (await (await queue.getJob(jobId))!.getState()) === 'completed', 'the job to complete', 60_000);

    const snapshots = (await snapshotsOfRun(run.id)).filter((s) => s.list_key === 'shipment_modes');
    expect(
      snapshots.map((s) => [s.status, s.changed]),
      'the frozen attempt commits the change; the recovered attempt finds it applied',
    ).toEqual([
      ['ok', true],
      ['ok', false],
    ]);
    expect(await alertKinds(snapshots[0]!.id)).toEqual(['added', 'modified']);
    expect(await alertKinds(snapshots[1]!.id)).toEqual([]);
    const now = await footprint(t.db, fx.source.environment);
    const grew = (k: string) => Number(now[k]) - Number(baseline[k]);
    expect(grew('applied'), 'one changed snapshot for the change').toBe(1);
    expect(grew('changes'), 'one added and one modified change row').toBe(2);
    expect(grew('alerts')).toBe(2);
    const matched = await expectWholeStates(t.db, fx.source, [after]);
    expect([...matched.values()].every((i) => i === 0)).toBe(true);
    await expectConsistentHistory(t.db, fx.source);

    expect(await w2.stop()).toBe(0);
    await w1.stop();
    expectNoSecretsIn(w1);
    expectNoSecretsIn(w2);
    await expectRerunAddsNothing(t.db, fx);
  }, 360_000);
});
