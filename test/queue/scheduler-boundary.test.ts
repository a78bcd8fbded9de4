// A worker that starts at a scheduled instant, while another worker already processes that
// instant's run job. BullMQ (6.7) re-adds the job of a slot still being processed when an upsert of
// its scheduler read the clock just before the slot and ran just after the job was taken: the slot
// then ran twice at once, and its run record got two snapshots of each list (seen once in CI as
// worker-races case 19 finding 9 ok snapshots where 6 were due). A start finds the scheduler as
// configured and leaves it alone.
import { Worker } from 'bullmq';
import { describe, expect, inject, it } from 'vitest';
import type { SourceConfig } from '../../src/config/types.ts';
import { defaultJobPolicy, reconcileSchedulers } from '../../src/queue/jobs.ts';
import { onCleanup, testQueue, waitFor, testQueuePrefix } from './helpers.ts';

describe('a worker starting at a scheduled instant', () => {
  it('leaves the scheduler as configured: the slot being processed is not queued again', async () => {
    const prefix = testQueuePrefix();
    const queue = testQueue(prefix);
    const source = { name: 'boundary', schedule: '*/2 * * * * *', timezone: 'UTC' } as SourceConfig;
    expect((await reconcileSchedulers(queue, [source], defaultJobPolicy)).upserted).toEqual(['source-boundary']);

    // The first worker takes the slot's job and holds it; one at a time, so a job queued again waits.
    const taken: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const worker = new Worker(
      queue.name,
      async (job) => {
        taken.push(job.id!);
        await held;
      },
      { connection: { url: inject('redisUrl') }, prefix, concurrency: 1 },
    );
    onCleanup(async () => {
      release();
      await worker.close();
    });
    const slotJob = await waitFor(() => taken[0], 'the first scheduled job to be taken', 10_000, 20);
    const slot = Number(slotJob.split(':').at(-1));

    // The second worker's start, its clock read 5 ms before the slot the first worker is processing.
    const clock = Date.now;
    Date.now = () => slot - 5;
    let change: Awaited<ReturnType<typeof reconcileSchedulers>>;
    try {
      change = await reconcileSchedulers(queue, [source], defaultJobPolicy);
    } finally {
      Date.now = clock;
    }
    expect(change.kept).toEqual(['source-boundary']);
    expect(change.upserted).toEqual([]);
    expect(await queue.getJobState(slotJob)).toBe('active');
    // Only the next slot's job is planned; the slot in hand is nowhere else.
    const planned = [...(await queue.getDelayed()), ...(await queue.getWaiting())].map((j) => j.id);
    expect(planned).toEqual([`repeat:source-boundary:${slot + 2000}`]);
    expect(taken).toEqual([slotJob]);

    // A changed schedule is still upserted.
    const hourly = { ...source, schedule: '0 * * * *' } as SourceConfig;
    expect((await reconcileSchedulers(queue, [hourly], defaultJobPolicy)).upserted).toEqual(['source-boundary']);
    expect((await queue.getJobScheduler('source-boundary'))?.pattern).toBe('0 * * * *');
  });
});
