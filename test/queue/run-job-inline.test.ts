// A run job syncs its source's small lists itself and queues target jobs only for the rest
// (src/queue/handlers/inline-targets.ts): a first run, whose sizes are unknown, tries every list in the
// run job, applies their first loads together and leaves a list that proves large to a target job;
// the next settles every list (unchanged or changed) in the run job; a list that a 429 stops goes to a target
// job of its own, which looks for it in the run first and syncs it once. The unchanged lists are
// recorded together after the last; one another sync holds by then goes to a target job too.
import { describe, expect, it } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { targetsFor } from '../../src/catalog/catalog.ts';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { runJobId, targetJobId } from '../../src/queue/redis/names.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { jobReturn, startTestWorker, testQueue, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';

const tdb = useTestDatabase();
const LISTS = ['shipment_modes', 'hazmat', 'piece_types', 'location_types'];
/** A list past largeListAfter (5,000 entries with the default tuning), never synced before. */
const LARGE: ListKey = 'nmfc_codes';

describe('a run job and its small lists', () => {
  it('applies first loads together, leaving a list that proves large to a target job, then syncs known small lists itself; a list it cannot settle goes to a target job', async () => {
    const sb = await useSandbox();
    sb.control.setGenerated(LARGE, 6000);
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'inline-env', REFSYNC_LISTS: [...LISTS, LARGE].join(',') });
    const source = config.sources[0]!;
    const targets = targetsFor(source).filter((t) => t.list.key !== LARGE);
    await startTestWorker(config, prefix);
    const queue = testQueue(prefix);

    const runOf = async (slot: string) => {
      await enqueueManualRuns(queue, config.sources, { slot });
      return waitFor(async () => {
        const { rows } = await tdb.db.query<{ id: number; status: string }>('select id, status from refdata.sync_runs where slot = $1', [slot]);
        return rows[0]?.status === 'succeeded' && rows[0];
      }, `run ${slot} to succeed`);
    };
    /** The run's snapshots of the small lists (the large one is a target job's in every run). */
    const snapshots = async (runId: number, withLarge = false) =>
      (
        await tdb.db.query<{ list_key: string; status: string; changed: boolean }>(
          'select list_key, status, changed from refdata.snapshots where run_id = $1 and (list_key <> $2 or $3) order by list_key',
          [runId, LARGE, withLarge],
        )
      ).rows;
    const targetJobs = async (slot: string) => {
      const jobs = await Promise.all(targets.map((t) => queue.getJob(targetJobId(source.name, t.list.key, t.variant, slot))));
      return jobs.filter((j) => j !== undefined);
    };

    // First run: no size known. The run job fetches every list; the small ones' first loads are
    // applied together (test/sync/first-loads-together.test.ts), and the large one is stopped and
    // left to a target job.
    const first = await runOf('inline-1');
    expect(await targetJobs('inline-1')).toHaveLength(0);
    const largeJob = await queue.getJob(targetJobId(source.name, LARGE, '', 'inline-1'));
    expect(largeJob).toBeDefined();
    expect(await jobReturn(queue, largeJob!.id!)).toMatchObject({ status: 'changed' });
    expect(await jobReturn(queue, runJobId(source.name, 'inline-1'))).toMatchObject({ kind: 'run', inRunJob: targets.length, fannedOut: true });
    const firstRows = await snapshots(first.id, true);
    expect(firstRows.map((r) => r.list_key)).toEqual([...LISTS, LARGE].sort());
    expect(firstRows.every((r) => r.status === 'ok' && r.changed)).toBe(true);
    expect(await tdb.db.query('select 1 from refdata.entries where environment = $1 and list_key = $2', ['inline-env', LARGE]).then((r) => r.rows.length)).toBe(
      6000,
    );

    // Second run: every list is known small. One changed upstream; the run job syncs all of them.
    sb.control.modifyEntry('shipment_modes', 'LTL', { description: 'Less-Than-Truckload, patched' });
    const second = await runOf('inline-2');
    expect(await targetJobs('inline-2')).toHaveLength(0);
    const rows = await snapshots(second.id);
    expect(rows.map((r) => r.list_key)).toEqual([...LISTS].sort());
    expect(rows.every((r) => r.status === 'ok')).toBe(true);
    expect(rows.filter((r) => r.changed).map((r) => r.list_key)).toEqual(['shipment_modes']);
    // The three unchanged lists were served as at their first loads: none of their entries was normalised.
    expect(await jobReturn(queue, runJobId(source.name, 'inline-2'))).toMatchObject({
      kind: 'run',
      inRunJob: targets.length,
      fannedOut: true,
      unchangedAsServed: targets.length - 1,
    });
    const { rows: current } = await tdb.db.query<{ n: number }>(
      "select count(*)::int as n from refdata.entries where environment = 'inline-env' and list_key = 'shipment_modes' and valid_to is null and payload->>'description' = 'Less-Than-Truckload, patched'",
    );
    expect(current[0]!.n).toBe(1);

    // Third run: hazmat answers 429 twice (the client's two attempts), so the run job cools the
    // source down and leaves hazmat to a target job, which checks the run first and then syncs it.
    sb.control.setFaults({ rateLimit: { count: 2, retryAfter: '1' }, paths: ['hazmat'] });
    const third = await runOf('inline-3');
    const jobs = await targetJobs('inline-3');
    expect(jobs.map((j) => j!.data.list)).toContain('hazmat');
    const hazmatJob = jobs.find((j) => j!.data.list === 'hazmat')!;
    expect(hazmatJob.data.checkDone).toBe(true);
    expect(await jobReturn(queue, hazmatJob.id!)).toMatchObject({ status: 'unchanged' });
    const thirdRows = await snapshots(third.id);
    expect(thirdRows.map((r) => r.list_key)).toEqual([...LISTS].sort());
    expect(thirdRows.every((r) => r.status === 'ok' && !r.changed)).toBe(true);
  });

  it('an unchanged list another sync holds when the run job records its unchanged lists goes to a target job, which syncs it once', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const ASIDE: ListKey[] = ['shipment_modes', 'hazmat', 'piece_types'];
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'aside-env', REFSYNC_LISTS: ASIDE.join(',') });
    const source = config.sources[0]!;
    await startTestWorker(config, prefix);
    const queue = testQueue(prefix);
    const succeeded = (slot: string) =>
      waitFor(async () => {
        const { rows } = await tdb.db.query<{ id: number; status: string }>('select id, status from refdata.sync_runs where slot = $1', [slot]);
        return rows[0]?.status === 'succeeded' && rows[0];
      }, `run ${slot} to succeed`);
    await enqueueManualRuns(queue, config.sources, { slot: 'aside-1' });
    await succeeded('aside-1');

    // Another sync holds hazmat's lock while the run job records its unchanged lists, and until
    // hazmat's target job is queued: the record leaves hazmat, whose target job then waits for it.
    const hazmatJob = targetJobId(source.name, 'hazmat', '', 'aside-2');
    await tdb.db.withConnection(async (conn) => {
      await conn.begin();
      await conn.query('select pg_advisory_xact_lock(refdata.target_lock_key($1, $2, $3))', ['aside-env', 'hazmat', '']);
      await enqueueManualRuns(queue, config.sources, { slot: 'aside-2' });
      await waitFor(async () => (await queue.getJob(hazmatJob)) !== undefined, "hazmat's target job to be queued");
      await conn.query('commit');
    });
    const run = await succeeded('aside-2');
    const { rows } = await tdb.db.query<{ list_key: string; n: number; unchanged: boolean }>(
      "select list_key, count(*)::int as n, bool_and(status = 'ok' and not changed) as unchanged from refdata.snapshots where run_id = $1 group by list_key order by list_key",
      [run.id],
    );
    expect(rows).toEqual([...ASIDE].sort().map((list_key) => ({ list_key, n: 1, unchanged: true })));
    expect(await jobReturn(queue, runJobId(source.name, 'aside-2'))).toMatchObject({ kind: 'run', inRunJob: 2, fannedOut: true });
    expect(await jobReturn(queue, hazmatJob)).toMatchObject({ status: 'unchanged' });
  });

  it('a worker syncs at most REFSYNC_CONCURRENCY lists at once, in its target jobs and its run jobs together', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const ALL: ListKey[] = ['shipment_modes', 'hazmat', 'piece_types', 'location_types', 'document_types', 'appointment_types'];
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'slots-env', REFSYNC_LISTS: ALL.join(','), REFSYNC_CONCURRENCY: '2' });
    await startTestWorker(config, prefix);
    const queue = testQueue(prefix);
    const finished = (slot: string) =>
      waitFor(async () => {
        const { rows } = await tdb.db.query<{ status: string }>('select status from refdata.sync_runs where slot = $1', [slot]);
        return rows[0]?.status === 'succeeded';
      }, `run ${slot} to succeed`);

    // Three lists known small after a first run. Then two runs at once: one of the three others, never
    // synced, whose target jobs take the job slot its run job frees, and one of the three known
    // small, whose run job syncs them itself beside those target jobs.
    const known: ListKey[] = ['shipment_modes', 'hazmat', 'piece_types'];
    await enqueueManualRuns(queue, config.sources, { slot: 'slots-1', lists: known });
    await finished('slots-1');
    sb.control.setLatency(400);
    let most = 0;
    const sampler = setInterval(() => {
      const inFlight = sb.control.requestLog().filter((r) => r.status === 0 && !r.path.startsWith('/v2/auth/')).length;
      most = Math.max(most, inFlight);
    }, 10);
    try {
      await enqueueManualRuns(queue, config.sources, { slot: 'slots-2', lists: ALL.filter((l) => !known.includes(l)) });
      await enqueueManualRuns(queue, config.sources, { slot: 'slots-3', lists: known });
      await finished('slots-2');
      await finished('slots-3');
    } finally {
      clearInterval(sampler);
      sb.control.setLatency(0);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
  });
});
