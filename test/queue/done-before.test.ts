// When a target job looks for its target's snapshot in the run before it syncs: only when it may
// have run before (a retry, a stall: test/faults/worker-kill-after-commit.test.ts) or when a second
// fan-out of its run queued it (checkDone). A first attempt from the run's first fan-out skips the
// look, a round trip per job. Jobs are added by hand here, as a second fan-out would add them after
// the first fan-out's jobs were trimmed.
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import type { TargetJobData } from '../../src/queue/jobs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { jobReturn, startTestWorker, testQueue, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';

const tdb = useTestDatabase();

describe('a target job and the snapshot its run may hold already', () => {
  it('is skipped when a second fan-out queued it; a job of the first fan-out syncs without looking', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'done-env', REFSYNC_LISTS: 'shipment_modes' });
    await startTestWorker(config, prefix);
    const queue = testQueue(prefix);
    await enqueueManualRuns(queue, config.sources, { slot: 'done-1' });
    const run = await waitFor(async () => {
      const { rows } = await tdb.db.query<{ id: number; status: string }>("select id, status from refdata.sync_runs where environment = 'done-env'");
      return rows[0]?.status === 'succeeded' && rows[0];
    }, 'the first run');
    const snapshotsInRun = async () =>
      (await tdb.db.query<{ n: number }>('select count(*)::int as n from refdata.snapshots where run_id = $1', [run.id])).rows[0]!.n;
    const fetches = () => sb.control.requestLog().filter((r) => r.path.includes('shipment-modes')).length;
    expect(await snapshotsInRun()).toBe(1);

    const data: TargetJobData = { kind: 'target', source: config.sources[0]!.name, list: 'shipment_modes', variant: '', runId: run.id, slot: 'done-1' };
    const finished = (id: string) => jobReturn(queue, id);

    const before = fetches();
    await queue.add('target', { ...data, checkDone: true }, { jobId: 'refanned' });
    expect(await finished('refanned')).toMatchObject({ status: 'done-before', skipped: true });
    expect(await snapshotsInRun()).toBe(1);
    expect(fetches()).toBe(before);

    // The same target queued as a first fan-out queues it: it does not look, and syncs (unchanged).
    await queue.add('target', data, { jobId: 'first-fan-out' });
    expect(await finished('first-fan-out')).toMatchObject({ status: 'unchanged' });
    expect(await snapshotsInRun()).toBe(2);
    expect(fetches()).toBe(before + 1);
  });
});
