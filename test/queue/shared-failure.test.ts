// A worker whose source cannot be reached: every target job of the run fails
// alike, each attempt. The jobs still retry and fail one by one as before; the log says each kind
// of failure once (the source's retries, a list that will retry, a job that will, a list that
// failed, a job that failed), where it said each one per job and per attempt, and the run's error
// says the reason once.
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { captureLogs } from '../helpers/logs.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { startTestWorker, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';

const tdb = useTestDatabase();

describe('a worker whose source is unreachable', () => {
  it('each failure that every job meets is one warning, its repeats at debug; the jobs still retry and fail; the run says why once', async () => {
    const logs = captureLogs('info');
    const lists = ['shipment_modes', 'equipment_types', 'hazmat', 'piece_types', 'service_levels'];
    const config = workerConfig(await useSandbox(), tdb.url, {
      REFSYNC_ENVIRONMENT: 'unreachable-worker',
      REFSYNC_BASE_URL: 'https://127.0.0.1:1',
      REFSYNC_LISTS: lists.join(','),
    });
    const worker = await startTestWorker(config, testQueuePrefix(), { logger: logs.logger, policy: { attempts: 2, backoffMs: 200 } });
    await enqueueManualRuns(worker.queue, config.sources, { slot: 'unreachable-1' });
    const run = await waitFor(async () => {
      const { rows } = await tdb.db.query<{ status: string; error: string | null }>("select status, error from refdata.sync_runs where slot = 'unreachable-1'");
      return rows[0]?.status === 'failed' && rows[0];
    }, 'the run to fail');
    const reason = 'POST /v2/auth/token/: cannot connect to 127.0.0.1:1 (ECONNREFUSED)';
    expect(run.error).toBe(`${lists.length} of ${lists.length} targets did not sync: all ${lists.length} lists failed: ${reason}`);

    // Every job tried twice: a failed snapshot per list, recorded after its last attempt.
    const { rows } = await tdb.db.query<{ n: number }>(
      "select count(*)::int as n from refdata.snapshots where environment = 'unreachable-worker' and status = 'failed'",
    );
    expect(rows[0]!.n).toBe(lists.length);
    const lines = logs.lines.map((l) => JSON.parse(l) as { level: number; msg: string; err?: string });
    const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg.replace(/ \(.*\)(; retrying).*$/, '$1'));
    expect(warnings.sort()).toEqual(['job failed', 'job will retry', 'list failed', 'list failed; will retry', 'upstream request failed; retrying']);
    for (const l of lines.filter((line) => line.level === 40 && line.err)) expect(l.err).toContain(reason);
    // The job's logger names the list; the failure's line does not name it a second time.
    const failed = logs.lines.find((l) => (JSON.parse(l) as { msg: string }).msg === 'list failed')!;
    expect(failed.match(/"target":/g)).toHaveLength(1);
  });

  it("the host gone after a run, with a token in hand: the run job's lists and their jobs are each said once, their cause once", async () => {
    const logs = captureLogs('info');
    const sb = await useSandbox();
    const lists = ['shipment_modes', 'equipment_types', 'hazmat', 'piece_types', 'service_levels'];
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'gone-worker', REFSYNC_LISTS: lists.join(',') });
    const worker = await startTestWorker(config, testQueuePrefix(), { logger: logs.logger, policy: { attempts: 2, backoffMs: 200 } });
    const runOf = (slot: string) =>
      waitFor(async () => {
        const { rows } = await tdb.db.query<{ status: string; error: string | null }>('select status, error from refdata.sync_runs where slot = $1', [slot]);
        return rows[0] && rows[0].status !== 'running' && rows[0];
      }, `run ${slot} to close`);
    await enqueueManualRuns(worker.queue, config.sources, { slot: 'gone-1' });
    expect((await runOf('gone-1')).status).toBe('succeeded');

    // The lists are known small now: the next run job syncs them itself, and each fails on its own request.
    await sb.close();
    logs.lines.length = 0;
    await enqueueManualRuns(worker.queue, config.sources, { slot: 'gone-2' });
    const run = await runOf('gone-2');
    const cause = `cannot connect to ${new URL(sb.url).host} (ECONNREFUSED)`;
    expect(run).toEqual({ status: 'failed', error: `${lists.length} of ${lists.length} targets did not sync: all ${lists.length} lists failed: ${cause}` });
    const lines = logs.lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    const said = (msg: string) => lines.filter((l) => l.level >= 30 && l.msg === msg).length;
    expect(said('list not settled in its run job: queued as a target job')).toBe(1);
    for (const msg of ['list failed; will retry', 'job will retry', 'list failed', 'job failed']) expect(said(msg), msg).toBe(1);
  });
});
