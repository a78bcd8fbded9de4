// Worker faults, case 1 (docs/reliability.md, "The worker under faults"): a `refsync worker` process
// SIGKILLed in the middle of a list's transaction. How the kill point is found and the job
// recovered: test/faults/worker-kill-case.ts.
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { runJobId, targetJobId } from '../../src/queue/redis/names.ts';
import { waitFor } from '../queue/helpers.ts';
import { expectWholeStates, footprint } from './invariants.ts';
import { startWorkerProcess } from './servers.ts';
import { useKillCase } from './worker-kill-case.ts';

const { t, probes, prepare, killHeldWorker, recover, expectCleanEnd } = useKillCase();
const { runOf, snapshotsOfRun, alertKinds, workerBackendsWaiting, holdLock } = probes;

describe('1. worker SIGKILLed in the middle of a list transaction', () => {
  it('the transaction rolls back; the stalled job is retried by a new worker to the same final state; no duplicate alert', async () => {
    const prepared = await prepare();
    const { fx, before, after, queue, env } = prepared;
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
    const { worker: w2, returned } = await recover(prepared, slot);
    expect(returned).toMatchObject({ status: 'changed' });
    const changed = (await snapshotsOfRun(run.id)).filter((s) => s.list_key === 'shipment_modes');
    expect(changed.map((s) => [s.status, s.changed])).toEqual([['ok', true]]);
    expect(await alertKinds(changed[0]!.id)).toEqual(['added', 'modified']);
    const matched = await expectWholeStates(t.db, fx.source, [after]);
    expect([...matched.values()].every((i) => i === 0)).toBe(true);
    await expectCleanEnd(w2, fx);
  }, 300_000);
});
