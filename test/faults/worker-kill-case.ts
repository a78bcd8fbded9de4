// What both worker-kill cases share (cases 1 and 2 of docs/reliability.md, "The worker under
// faults"): each case is a file of its own, so the two minute-long waits on BullMQ's stalled-job
// check run side by side. Each runs its worker processes on a private Redis; the kill point is found
// in Postgres, not guessed by time: the test holds a lock the worker must wait for, sees the
// worker's backend wait on it (pg_locks), and kills it there. A new worker recovers the job through
// BullMQ's stalled-job check (lock 30 s, check every 30 s: up to about a minute on its own clock).
// The baseline synced first makes every list known small, so the worker syncs them inside the run
// job (src/queue/handlers/inline-targets.ts): that is the job killed, and its re-run queues a target job per
// list, each of which looks for its list in the run first.
import { beforeAll, expect } from 'vitest';
import { runJobId, targetJobId } from '../../src/queue/redis/names.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { jobReturn, waitFor } from '../queue/helpers.ts';
import {
  changeList,
  expectNoSecretsIn,
  expectRerunAddsNothing,
  faultSource,
  privateWorkerQueue,
  stalledCount,
  workerProbes,
  type FaultSource,
} from './harness.ts';
import { expectConsistentHistory } from './invariants.ts';
import { startWorkerProcess, type WorkerProcess } from './servers.ts';

/** Generous bounds: two loaded cores, and BullMQ's stalled check needs up to ~60 s by design. */
export const RECOVERY_MS = 150_000;

/** The database, sandbox and probes of one kill case's file, and the steps both cases take. */
export function useKillCase() {
  const t = useTestDatabase();
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await useSandbox();
  });
  const probes = workerProbes(() => ({ db: t.db, url: t.url }));

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
    await waitFor(probes.noWorkerBackends, 'the killed worker backends to end', 60_000);
    expectNoSecretsIn(worker);
  }

  /**
   * A new worker recovers the killed run job through BullMQ's stalled-job check (once): the run
   * succeeds. The new worker, and what the changed list's target job returned.
   */
  async function recover(prepared: Awaited<ReturnType<typeof prepare>>, slot: string): Promise<{ worker: WorkerProcess; returned: Record<string, unknown> }> {
    const { fx, env, queue, redis, prefix } = prepared;
    const worker = await startWorkerProcess(env);
    const done = await probes.runFinished(fx.source, slot, 'the run to finish after the stalled job is recovered', RECOVERY_MS);
    expect(done.status).toBe('succeeded');
    const returned = await jobReturn(queue, targetJobId(fx.source.name, 'shipment_modes', '', slot), RECOVERY_MS);
    expect(await stalledCount(redis.url, prefix, runJobId(fx.source.name, slot)), 'recovered by the stalled-job check').toBe(1);
    return { worker, returned };
  }

  /** The history is consistent, the recovering worker stops cleanly with no secret in its output, and a re-run adds nothing. */
  async function expectCleanEnd(worker: WorkerProcess, fx: FaultSource): Promise<void> {
    await expectConsistentHistory(t.db, fx.source);
    expect(await worker.stop()).toBe(0);
    expectNoSecretsIn(worker);
    await expectRerunAddsNothing(t.db, fx);
  }

  return { t, sandbox: () => sb, probes, prepare, killHeldWorker, recover, expectCleanEnd };
}
