// Worker faults, case 2 (docs/reliability.md, "The worker under faults"): a `refsync worker` process
// SIGKILLed after its lists committed, before BullMQ marked the job complete. How the kill point is
// found and the job recovered: test/faults/worker-kill-case.ts.
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { runJobId, targetJobId } from '../../src/queue/redis/names.ts';
import { jobReturn, waitFor } from '../queue/helpers.ts';
import { expectWholeStates, footprint } from './invariants.ts';
import { startWorkerProcess } from './servers.ts';
import { RECOVERY_MS, useKillCase } from './worker-kill-case.ts';

const { t, sandbox, probes, prepare, killHeldWorker, recover, expectCleanEnd } = useKillCase();
const { runOf, snapshotsOfRun, alertKinds, workerBackendsWaiting, holdLock } = probes;

describe('2. worker SIGKILLed after the commit, before the job is marked complete', () => {
  it('the re-run of the run job queues its lists, and each target job finds its list committed and skips it: no new snapshot, change or alert', async () => {
    const prepared = await prepare();
    const { fx, after, queue, env } = prepared;
    const slot = 'kill-after-commit';
    const runJob = runJobId(fx.source.name, slot);
    const targets = fx.source.lists.length;

    // Slow upstream: the run record exists seconds before any list is fetched and applied.
    sandbox().control.setLatency(3_000);
    try {
      const w1 = await startWorkerProcess(env);
      await enqueueManualRuns(queue, [fx.source], { slot });
      const run = await waitFor(() => runOf(fx.source, slot), 'the run record', 60_000, 50);
      // A run job counts the lists it synced itself once, after the last: having synced them all, it
      // closes the run through refdata.run_progress, which locks the run row `for no key update`. This lock lets every
      // list's commit through (the changed one's apply, the unchanged ones' record_unchanged_lists: their
      // foreign-key checks take key-share locks, which `for no key update` allows) and stops the run
      // job right there, before it returns to BullMQ.
      const locker = await holdLock('select id from refdata.sync_runs where id = $1 for no key update', [run.id]);
      expect(await snapshotsOfRun(run.id), 'no list applied before the run record was locked').toEqual([]);
      await waitFor(
        async () => (await snapshotsOfRun(run.id)).length === targets && (await workerBackendsWaiting("a.query ilike '%refdata.run_progress(%'")) === 1,
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

      sandbox().control.setLatency(0);
      const { worker: w2, returned } = await recover(prepared, slot);
      expect(returned, 'the target job saw the committed snapshot and skipped the list').toMatchObject({ skipped: true });
      // The unchanged lists were committed before the kill too: their target jobs skipped them as well.
      for (const list of fx.source.lists) {
        const listReturned = await jobReturn(queue, targetJobId(fx.source.name, list, '', slot), RECOVERY_MS);
        expect(listReturned, list).toMatchObject({ status: 'done-before', skipped: true });
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
      await expectCleanEnd(w2, fx);
    } finally {
      sandbox().control.setLatency(0);
    }
  }, 300_000);
});
