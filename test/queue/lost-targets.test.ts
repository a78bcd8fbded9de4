// A target job that stalls more than BullMQ allows is failed without reaching the processor, so the
// worker must record its target and close the run by other means. The stalls here are real: a
// worker takes the job and never renews its lock, and BullMQ's own stall check (maxStalledCount 0,
// so the first stall is the last) marks it with a deferred failure. A run job failed that way
// leaves the targets it had not queued with no job at all: the worker records those too.
import { UnrecoverableError, Worker, type Job, type Queue } from 'bullmq';
import { describe, expect, inject, it } from 'vitest';
import type { AppConfig } from '../../src/config/types.ts';
import type { RunJobData, TargetJobData } from '../../src/queue/jobs.ts';
import { QUEUE_NAME, runJobId, targetJobId } from '../../src/queue/redis/names.ts';
import { startRun } from '../../src/sync/run/runs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { onCleanup, startTestWorker, testQueue, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';

const tdb = useTestDatabase();
type List = 'shipment_modes' | 'equipment_types';

/** A run of `lists` opened as a trigger would, with a queue and a way to add its target jobs. */
async function openRun(config: AppConfig, prefix: string, slot: string, lists: List[]) {
  const source = config.sources[0]!;
  const run = await startRun(tdb.db, { source, trigger: 'manual', targetsTotal: lists.length, slot });
  const queue = testQueue(prefix);
  const add = (list: List) => {
    const data: TargetJobData = { kind: 'target', source: source.name, list, variant: '', runId: run.id, slot };
    return queue.add('target', data, { jobId: targetJobId(source.name, list, '', slot), attempts: 3 });
  };
  return { runId: run.id, queue, add, jobId: (list: List) => targetJobId(source.name, list, '', slot) };
}

/** Takes the job with a worker that never renews its lock, until BullMQ's stall check gives up on it. */
async function stallPastTheLimit(prefix: string, queue: Queue, jobId: string): Promise<Worker> {
  const frozen = new Worker(QUEUE_NAME, null, {
    connection: { url: inject('redisUrl') },
    prefix,
    autorun: false,
    lockDuration: 300,
    stalledInterval: 200,
    maxStalledCount: 0,
  });
  frozen.on('error', () => undefined);
  onCleanup(() => frozen.close());
  expect((await frozen.getNextJob('frozen-1'))?.id).toBe(jobId);
  void frozen.startStalledCheckTimer();
  await waitFor(async () => Boolean((await queue.getJob(jobId))?.deferredFailure), 'the stall check to give up on the job');
  return frozen;
}

async function runRow(runId: number) {
  const { rows } = await tdb.db.query<{ status: string; error: string | null; targets_done: number }>(
    'select status, error, targets_done from refdata.sync_runs where id = $1',
    [runId],
  );
  return rows[0]!;
}

async function snapshotsOf(runId: number) {
  const { rows } = await tdb.db.query<{ list_key: string; status: string; error_code: string | null }>(
    'select list_key, status, error_code from refdata.snapshots where run_id = $1 order by list_key, id',
    [runId],
  );
  return rows;
}

describe('target jobs that stall past the limit', () => {
  it('the worker that fails the job records its target as failed, and the run closes partial', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'lost-env', REFSYNC_LISTS: 'shipment_modes,equipment_types' });
    const run = await openRun(config, prefix, 'manual-lost-1', ['equipment_types', 'shipment_modes']);
    await run.add('equipment_types');
    const frozen = await stallPastTheLimit(prefix, run.queue, run.jobId('equipment_types'));
    await frozen.close();

    // The sweep is left at its defaults (this run is too young for it): the 'failed' event records it.
    await startTestWorker(config, prefix);
    await run.add('shipment_modes');
    const closed = await waitFor(async () => {
      const row = await runRow(run.runId);
      return row.status !== 'running' && row;
    }, 'the run to close');
    expect(closed).toMatchObject({ status: 'partial', targets_done: 2 });
    expect(closed.error).toMatch(/equipment_types \(failed: the worker job failed outside the sync: job stalled more than allowable limit/);
    expect(await snapshotsOf(run.runId)).toEqual([
      { list_key: 'equipment_types', status: 'failed', error_code: 'job_stalled' },
      { list_key: 'shipment_modes', status: 'ok', error_code: null },
    ]);
    expect(await run.queue.getJobState(run.jobId('equipment_types'))).toBe('failed');
  });

  it('a failed job the event could not record is found by the sweep, once', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'swept-env', REFSYNC_LISTS: 'equipment_types' });
    const run = await openRun(config, prefix, 'manual-lost-2', ['equipment_types']);
    await run.add('equipment_types');
    const frozen = await stallPastTheLimit(prefix, run.queue, run.jobId('equipment_types'));
    // What a worker does with the deferred failure, done here where no 'failed' handler can record it.
    const job = (await frozen.getNextJob('frozen-2')) as Job<TargetJobData>;
    expect(job.id).toBe(run.jobId('equipment_types'));
    await job.moveToFailed(new UnrecoverableError(job.deferredFailure), 'frozen-2', false);
    await frozen.close();
    expect(await snapshotsOf(run.runId)).toEqual([]);

    await startTestWorker(config, prefix, { lostTargetIntervalMs: 200, lostTargetAfterMs: 0 });
    const closed = await waitFor(async () => {
      const row = await runRow(run.runId);
      return row.status !== 'running' && row;
    }, 'the sweep to close the run');
    expect(closed).toMatchObject({ status: 'failed', targets_done: 1 });
    // Later sweeps find the failure recorded and add nothing.
    await new Promise((r) => setTimeout(r, 600));
    expect(await snapshotsOf(run.runId)).toEqual([{ list_key: 'equipment_types', status: 'failed', error_code: 'job_stalled' }]);
  });

  it('a run job failed that way leaves its run closed: the targets with no job of their own recorded as failed', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'lost-run-env', REFSYNC_LISTS: 'shipment_modes,equipment_types' });
    const source = config.sources[0]!;
    // As a run job that opened its run, queued shipment_modes and then died twice (say, while it
    // synced equipment_types itself) leaves it.
    const slot = 'manual-lost-3';
    const run = await openRun(config, prefix, slot, ['equipment_types', 'shipment_modes']);
    const data: RunJobData = { kind: 'run', source: source.name, trigger: 'manual', slot };
    await run.queue.add('run', data, { jobId: runJobId(source.name, slot), attempts: 3 });
    const frozen = await stallPastTheLimit(prefix, run.queue, runJobId(source.name, slot));
    await frozen.close();
    await run.add('shipment_modes');

    await startTestWorker(config, prefix);
    const closed = await waitFor(async () => {
      const row = await runRow(run.runId);
      return row.status !== 'running' && row;
    }, 'the run to close');
    expect(closed).toMatchObject({ status: 'partial', targets_done: 2 });
    expect(await snapshotsOf(run.runId)).toEqual([
      { list_key: 'equipment_types', status: 'failed', error_code: 'job_stalled' },
      { list_key: 'shipment_modes', status: 'ok', error_code: null },
    ]);
  });
});
