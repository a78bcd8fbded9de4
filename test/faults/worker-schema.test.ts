// A running worker meets a database migrated by a newer refsync (docs/production.md, "Upgrading"):
// a real `refsync worker` process, and a real migration row inserted while it runs. Its periodic
// look runs every REFSYNC_SCHEMA_CHECK_INTERVAL_MS (shortened here; 60 s by default); a run job
// taken after the row appeared is checked before it starts, whatever the timer.
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { shippedMigrations } from '../../src/db/schema-version.ts';
import { runJobId } from '../../src/queue/redis/names.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { recordNewerMigration } from '../helpers/schema.ts';
import { waitFor } from '../queue/helpers.ts';
import { changeList, expectNoSecretsIn, faultSource, privateWorkerQueue, workerProbes } from './harness.ts';
import { startWorkerProcess } from './servers.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
beforeEach(async () => {
  await t.db.query("delete from drizzle.__drizzle_migrations where hash = 'h30-newer-release'");
});
const { runOf, runFinished, snapshotsOfRun, workerBackendsWaiting, holdLock } = workerProbes(() => ({ db: t.db, url: t.url }));

const shipped = shippedMigrations().length;
const versionsLine = `database schema version ${shipped + 1}, this worker ships schema version ${shipped}`;
const readyz = async (httpUrl: string) => (await fetch(`${httpUrl}/readyz`)).status;

describe('a newer migration while the worker runs', () => {
  it('stops taking jobs, answers 503 on /readyz, lets the job it holds finish, logs one line naming both versions, exits non-zero', async () => {
    const fx = faultSource(sb, t.db);
    expect((await fx.sync()).status).toBe('succeeded');
    changeList(sb, 'shipment_modes');
    const { queue, env } = await privateWorkerQueue(sb, fx.source, t.url);

    // The worker's transaction of shipment_modes waits at its alert write while the test holds the outbox.
    const locker = await holdLock('lock table refdata.alerts in share mode');
    const worker = await startWorkerProcess({ ...env, LOG_LEVEL: 'info', REFSYNC_SCHEMA_CHECK_INTERVAL_MS: '200' });
    expect(await readyz(worker.httpUrl)).toBe(200);
    await enqueueManualRuns(queue, [fx.source], { slot: 'held' });
    await waitFor(async () => (await workerBackendsWaiting("a.query ilike '%insert into refdata.alerts%'")) > 0, 'the held job to wait on the outbox', 60_000);

    await recordNewerMigration(t.db);
    await waitFor(async () => (await readyz(worker.httpUrl)) === 503, '/readyz to answer 503', 30_000, 100);
    // A run queued now is left for a newer worker: this one takes no more jobs.
    await enqueueManualRuns(queue, [fx.source], { slot: 'after' });
    expect(worker.child.exitCode, 'the worker waits for the job it holds').toBe(null);

    await locker.release();
    expect(await worker.exited).not.toBe(0);
    const held = await runFinished(fx.source, 'held', 'the held run to finish', 30_000);
    const shipmentModes = (await snapshotsOfRun(held.id)).filter((s) => s.list_key === 'shipment_modes');
    expect(
      shipmentModes.map((s) => [s.status, s.changed]),
      'the held job finished and committed',
    ).toEqual([['ok', true]]);
    expect(await runOf(fx.source, 'after')).toBeUndefined();
    expect(await (await queue.getJob(runJobId(fx.source.name, 'after')))?.getState()).toBe('waiting');

    const { stdout, stderr } = worker.output();
    const lines = `${stdout}${stderr}`.split('\n').filter((l) => l.includes(versionsLine));
    expect(lines, 'one line naming both schema versions').toHaveLength(1);
    expectNoSecretsIn(worker);
  }, 180_000);

  it('a run job taken after the migration is checked before it starts: back to waiting, no run opened, the worker exits non-zero', async () => {
    const fx = faultSource(sb, t.db);
    const { queue, env } = await privateWorkerQueue(sb, fx.source, t.url);
    // The default interval (60 s): only the check before the run job can see the row in time.
    const worker = await startWorkerProcess({ ...env, LOG_LEVEL: 'info' });
    await recordNewerMigration(t.db);
    await enqueueManualRuns(queue, [fx.source], { slot: 'first-after' });

    expect(await worker.exited).not.toBe(0);
    expect(await runOf(fx.source, 'first-after')).toBeUndefined();
    const job = await queue.getJob(runJobId(fx.source.name, 'first-after'));
    expect(await job?.getState()).toBe('waiting');
    expect(job?.attemptsMade, 'no attempt spent').toBe(0);
    expect(`${worker.output().stdout}${worker.output().stderr}`.split('\n').filter((l) => l.includes(versionsLine))).toHaveLength(1);
  }, 120_000);
});
