// Metrics that must tell the truth about what was applied: a held snapshot changed nothing, so it
// counts no entry changes; and the `source` label can be dropped from per-process series.
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { WorkerMetrics } from '../../src/server/metrics.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { startTestWorker, waitFor, workerConfig, testQueuePrefix } from '../queue/helpers.ts';

const tdb = useTestDatabase();

async function metricsText(port: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

describe('refsync_entry_changes_total', () => {
  it('counts an applied snapshot and nothing of a held one', async () => {
    const sb = await useSandbox();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'held-env', REFSYNC_LISTS: 'accessorials' });
    const worker = await startTestWorker(config, testQueuePrefix());
    // Waits for the run, then for its target to be observed (the run row closes inside the last
    // target's processor, a moment before the metrics see it).
    const runOnce = async (slot: string, status: string) => {
      await enqueueManualRuns(worker.queue, config.sources, { slot });
      const observed = `refsync_sync_duration_seconds_count{source="held-env",list="accessorials",variant="",status="${status}"} 1\n`;
      return waitFor(async () => {
        const text = await metricsText(worker.http.port);
        return text.includes(observed) ? text : '';
      }, `run ${slot} to be observed as ${status}`);
    };
    const first = await runOnce('first', 'changed');
    const added = /^refsync_entry_changes_total\{source="held-env",list="accessorials",kind="added"\} (\d+)$/m.exec(first);
    expect(Number(added?.[1])).toBeGreaterThan(1);

    // All but one entry gone: more than REFSYNC_MAX_REMOVED_FRACTION, so the snapshot is held.
    const [keep] = sb.control.getEntries('accessorials') as Array<Record<string, unknown>>;
    sb.control.setEntries('accessorials', [keep!]);
    const second = await runOnce('second', 'held');
    expect(second).toMatch(/^refsync_sync_failures_total\{source="held-env",list="accessorials",code="held"\} 1$/m);
    expect(second).not.toMatch(/refsync_entry_changes_total\{[^}]*kind="removed"\}/);
    expect(second).toContain(`refsync_entry_changes_total{source="held-env",list="accessorials",kind="added"} ${added![1]}\n`);
    const { rows } = await tdb.db.query<{ n: number }>(
      "select count(*)::int as n from refdata.entry_changes where environment = 'held-env' and change = 'removed'",
    );
    expect(rows[0]!.n).toBe(0);
  }, 60_000);
});

describe('REFSYNC_METRICS_SOURCE_LABEL=false', () => {
  it('leaves the source label off histograms and counters', async () => {
    const metrics = new WorkerMetrics({
      db: tdb.db,
      probeDatabase: () => tdb.db.probe(),
      sources: [],
      logger: silentLogger,
      queueCounts: async () => ({}),
      sourceLabel: false,
    });
    metrics.target({ source: 'acme', list: 'hazmat', variant: '', status: 'changed', durationMs: 20, counts: { added: 3 } });
    metrics.upstreamRequest('acme', { endpoint: '/v2/hazmat/', method: 'GET', status: 200, durationMs: 5 });
    const text = await metrics.text();
    expect(text).toMatch(/^refsync_entry_changes_total\{list="hazmat",kind="added"\} 3$/m);
    expect(text).toMatch(/^refsync_sync_duration_seconds_count\{list="hazmat",variant="",status="changed"\} 1$/m);
    expect(text).toMatch(/^refsync_upstream_request_duration_seconds_count\{endpoint="\/v2\/hazmat\/",method="GET",status="200"\} 1$/m);
    expect(text).not.toContain('acme');
  });
});
