// A worker whose source cannot be reached (issue 59, item 2): every target job of the run fails
// alike, each attempt. The jobs still retry and fail one by one as before; the log says each kind
// of failure once (the source's retries, a list that will retry, a job that will, a list that
// failed, a job that failed), where it said each one per job and per attempt, and the run's error
// says the reason once.
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { testQueuePrefix, useTestDatabase } from '../helpers/db.ts';
import { captureLogs } from '../helpers/logs.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { startTestWorker, waitFor, workerConfig } from './helpers.ts';

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
  });
});
