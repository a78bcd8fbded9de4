// The worker's HTTP side over real sockets: health, readiness (with Postgres cut off through a TCP
// proxy the test controls), metrics after a run, and the dashboard behind basic auth.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { onCleanup, startTestWorker, waitFor, workerConfig, testQueuePrefix } from '../queue/helpers.ts';

const tdb = useTestDatabase();

/** A TCP proxy to Postgres that the test can cut (closing every socket) and restore on the same port. */
async function postgresProxy() {
  const target = new URL(inject('databaseServerUrl'));
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server ? server.close(() => resolve()) : resolve();
      server = undefined;
    });
  await open();
  onCleanup(cut);
  const url = new URL(tdb.url);
  url.port = String(port);
  url.hostname = '127.0.0.1';
  return { url: url.toString(), cut, restore: open };
}

async function get(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { headers });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

describe('worker HTTP', () => {
  it('/healthz, /metrics after a run, and the dashboard behind basic auth', async () => {
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const config = workerConfig(sb, tdb.url, {
      REFSYNC_ENVIRONMENT: 'http-env',
      REFSYNC_LISTS: 'shipment_modes,equipment_types',
      REFSYNC_DASHBOARD_PASSWORD: 'board-pass',
    });
    const worker = await startTestWorker(config, prefix);
    const base = `http://127.0.0.1:${worker.http.port}`;
    expect(worker.http.host).toBe('127.0.0.1');

    expect(await get(base, '/healthz')).toMatchObject({ status: 200 });
    const ready = await get(base, '/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok', worker: 'ok' } });

    await enqueueManualRuns(worker.queue, config.sources, { slot: 'metrics-1' });
    await waitFor(async () => {
      const { rows } = await tdb.db.query("select 1 from refdata.sync_runs where slot = 'metrics-1' and status = 'succeeded'");
      return rows.length > 0;
    }, 'the run');
    // The run row turns 'succeeded' inside the run job's processor, which synced both lists itself
    // (src/queue/handlers/inline-targets.ts), a moment before BullMQ marks that job completed and the
    // worker counts it, so wait for the count rather than race it.
    let metrics = await get(base, '/metrics');
    await waitFor(async () => {
      metrics = await get(base, '/metrics');
      return /^refsync_jobs_total\{name="run",outcome="completed"\} 1$/m.test(metrics.text);
    }, 'the run job to be counted');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const series = [
      /^refsync_sync_duration_seconds_count\{source="http-env",list="shipment_modes",variant="",status="changed"\} 1$/m,
      /^refsync_entry_changes_total\{source="http-env",list="shipment_modes",kind="added"\} [1-9]\d*$/m,
      /^refsync_last_success_timestamp_seconds\{source="http-env",list="equipment_types",variant=""\} \d+/m,
      /^refsync_entries\{source="http-env",list="shipment_modes",variant=""\} [1-9]\d*$/m,
      /^refsync_upstream_request_duration_seconds_count\{source="http-env",endpoint="\/v2\/auth\/token\/",method="POST",status="200"\} 1$/m,
      /^refsync_queue_jobs\{state="completed"\} 1$/m,
      /^refsync_alerts_pending \d+$/m,
      /^refsync_jobs_total\{name="run",outcome="completed"\} 1$/m,
      /^# TYPE refsync_sync_failures_total counter$/m,
    ];
    for (const re of series) expect(metrics.text).toMatch(re);
    // The outbox backlog is the count of pending alerts: the first sync wrote 'added' alerts, and no
    // dispatcher runs in this test.
    const pending = await tdb.db.query<{ n: number }>("select count(*)::int as n from refdata.alerts where state = 'pending'");
    expect(metrics.text).toContain(`refsync_alerts_pending ${pending.rows[0]!.n}\n`);

    expect((await get(base, '/admin/queues')).status).toBe(401);
    expect((await get(base, '/admin/queues', { authorization: `Basic ${btoa('admin:wrong')}` })).status).toBe(401);
    const auth = { authorization: `Basic ${btoa('admin:board-pass')}` };
    const page = await get(base, '/admin/queues', auth);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<base href="/admin/queues/"');
    expect(page.text).toContain('<title>refsync</title>');
    const api = await get(base, '/admin/queues/api/queues', auth);
    expect(api.status).toBe(200);
    expect(JSON.parse(api.text).queues.map((q: { name: string }) => q.name)).toEqual(['sync']);
    expect((await get(base, '/admin/queues/api/queues')).status).toBe(401);
  });

  it('/readyz fails while Postgres is unreachable, naming it, and recovers', async () => {
    const sb = await useSandbox();
    const proxy = await postgresProxy();
    const worker = await startTestWorker(workerConfig(sb, proxy.url, { REFSYNC_ENVIRONMENT: 'ready-env' }), testQueuePrefix());
    const base = `http://127.0.0.1:${worker.http.port}`;
    expect((await get(base, '/readyz')).status).toBe(200);

    await proxy.cut();
    // The last answer is reused for a second (one probe for a burst of callers): wait for the next.
    const down = await waitFor(async () => {
      const res = await get(base, '/readyz');
      return res.status === 503 && res;
    }, '/readyz to answer 503');
    const body = JSON.parse(down.text) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('not ready');
    expect(body.checks.postgres).not.toBe('ok');
    expect(body.checks.redis).toBe('ok');
    expect((await get(base, '/healthz')).status).toBe(200);

    await proxy.restore();
    await waitFor(async () => (await get(base, '/readyz')).status === 200, '/readyz to recover');
  });
});
