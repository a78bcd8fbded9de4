// Worker fault: a scheduled run and a manual trigger at once, across two
// `refsync worker` processes. The test makes "at once" certain instead of hoping for it: it holds
// every target's advisory lock (the one the pipeline takes in the apply transaction) until both
// runs have fetched every list and wait on it, then lets them go together.
import { beforeAll, describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { startRedisServer, testQueue, waitFor, testQueuePrefix } from '../queue/helpers.ts';
import { changeList, expectNoSecretsIn, expectRerunAddsNothing, faultSource, workerEnv, workerProbes } from './harness.ts';
import { expectConsistentHistory, expectWholeStates, footprint } from './invariants.ts';
import { startWorkerProcess } from './servers.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
const { runOf, snapshotsOfRun, workerBackendsWaiting, holdLock } = workerProbes(() => ({ db: t.db, url: t.url }));

describe('19. a scheduled run and a manual trigger at once, two worker processes', () => {
  it('each target commits the change once; both run records end succeeded', async () => {
    const fx = faultSource(sb, t.db);
    expect((await fx.sync()).status).toBe('succeeded');
    const baseline = await footprint(t.db, fx.source.environment);
    for (const list of fx.source.lists) changeList(sb, list);
    const after = fx.served();
    const redis = await startRedisServer();
    const prefix = testQueuePrefix();
    const queue = testQueue(prefix, redis.url);
    const env = workerEnv(sb, fx.source, {
      DATABASE_URL: t.url,
      REDIS_URL: redis.url,
      REFSYNC_QUEUE_PREFIX: prefix,
      REFSYNC_SCHEDULE: '*/10 * * * * *',
      // Both runs' lists at once even on one worker: with the default 4 sync slots, two run jobs
      // taken by the same worker could not both wait on every lock, and the next scheduled run
      // (10 s later) would join the race and could take a change from both.
      REFSYNC_CONCURRENCY: '8',
    });
    const targets = fx.source.lists.length;

    // The key lockTarget (src/sync/target/target-lock.ts) takes for each target.
    const keys = fx.source.lists.map((l) => [fx.source.environment, l, ''].join('\u001f'));
    const locks = await holdLock('select pg_advisory_xact_lock(hashtextextended(k, 7302611)) from unnest($1::text[]) k', [keys]);
    const [w1, w2] = await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
    const scheduled = await waitFor(
      async () => {
        const { rows } = await t.db.query<{ slot: string }>(
          "select slot from refdata.sync_runs where source = $1 and trigger = 'schedule' order by id limit 1",
          [fx.source.name],
        );
        return rows[0]?.slot;
      },
      'a scheduled run',
      60_000,
      50,
    );
    await enqueueManualRuns(queue, [fx.source], { slot: 'manual-race' });
    // Both runs' target jobs have fetched and wait to apply (the pipeline's lock_timeout is 30 s).
    await waitFor(async () => (await workerBackendsWaiting("l.locktype = 'advisory'")) >= 2 * targets, 'both runs to wait on the target locks', 25_000, 50);
    await locks.release();

    const sched = await waitFor(
      async () => {
        const r = await runOf(fx.source, scheduled);
        return r && r.status !== 'running' && r;
      },
      'the scheduled run to finish',
      90_000,
      250,
    );
    const manual = await waitFor(
      async () => {
        const r = await runOf(fx.source, 'manual-race');
        return r && r.status !== 'running' && r;
      },
      'the manual run to finish',
      90_000,
      250,
    );
    expect([sched.status, manual.status]).toEqual(['succeeded', 'succeeded']);

    // Stop the schedule and let any later scheduled run end before checking the history.
    await queue.removeJobScheduler(`source-${fx.source.name}`);
    await waitFor(
      async () => {
        const { rows } = await t.db.query("select 1 from refdata.sync_runs where source = $1 and status = 'running'", [fx.source.name]);
        return rows.length === 0;
      },
      'the runs in flight to end',
      60_000,
      250,
    );
    expect(await w1.stop()).toBe(0);
    expect(await w2.stop()).toBe(0);

    const both = [...(await snapshotsOfRun(sched.id)), ...(await snapshotsOfRun(manual.id))];
    // The message names every snapshot of both runs: a duplicate says which run took the list twice.
    expect(
      both.filter((s) => s.status === 'ok'),
      JSON.stringify({ scheduled: sched.id, manual: manual.id, both }),
    ).toHaveLength(2 * targets);
    for (const list of fx.source.lists) {
      expect(
        both.filter((s) => s.list_key === list && s.changed),
        `${list}: one changed snapshot of the two runs`,
      ).toHaveLength(1);
    }
    const now = await footprint(t.db, fx.source.environment);
    const grew = (k: string) => Number(now[k]) - Number(baseline[k]);
    expect(grew('applied'), 'one changed snapshot per target').toBe(targets);
    expect(grew('changes'), 'one added and one modified change row per target').toBe(2 * targets);
    // Alerts only on the changed snapshots (one per kind there: the invariant checker below); a
    // schema_changed alert may come with them where the added entry brought a new field.
    const { rows: stray } = await t.db.query(
      'select a.id from refdata.alerts a join refdata.snapshots s on s.id = a.snapshot_id where s.run_id = any($1) and not s.changed',
      [[sched.id, manual.id]],
    );
    expect(stray, 'alerts on the run that found the change applied').toEqual([]);
    expect(grew('alerts')).toBeGreaterThanOrEqual(2 * targets);
    const matched = await expectWholeStates(t.db, fx.source, [after]);
    expect([...matched.values()].every((i) => i === 0)).toBe(true);
    await expectConsistentHistory(t.db, fx.source);
    expectNoSecretsIn(w1);
    expectNoSecretsIn(w2);
    await expectRerunAddsNothing(t.db, fx);
  }, 300_000);
});
