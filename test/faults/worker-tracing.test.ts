// OpenTelemetry tracing across processes, with an OTLP/HTTP receiver of the test's own:
// two `refsync worker` processes exporting http/json and one `refsync trigger` exporting the default
// http/protobuf make one trace (a target job, here the large list's, carrying it in its data to
// whichever worker takes it): the trigger's span, the run span under it, one target span per
// target, the upstream requests as client spans under their targets. No export
// body holds a password, API key, token, connection string or header value. Then a collector that
// hangs: the syncs still succeed and each worker warns once, not once per export.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { targetsFor } from '../../src/catalog/catalog.ts';
import { DEFAULT_ACCOUNTS, SANDBOX_KEYED_ACCOUNT } from '../../src/sandbox/index.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxSource } from '../helpers/source.ts';
import { runCli, startRedisServer, waitFor, testQueuePrefix } from '../queue/helpers.ts';
import { uniqueEnvironment, workerEnv, workerProbes } from './harness.ts';
import { startWorkerProcess } from './servers.ts';
import { everySandboxTarget } from '../helpers/targets.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
const { runFinished } = workerProbes(() => ({ db: t.db, url: t.url }));

// Every credential the sandbox is shown, as it arrives there (tokens issued at login included).
const presented = new Set<string>();
const onRequest = (message: unknown) => {
  const auth = (message as { request: IncomingMessage }).request.headers.authorization;
  const value = auth?.split(' ').slice(1).join(' ');
  if (value) presented.add(value);
};
subscribe('http.server.request.start', onRequest);
afterAll(() => unsubscribe('http.server.request.start', onRequest));

const hangingCollectors: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of hangingCollectors.splice(0)) await close();
});

const COLLECTOR_TOKEN = `collector-token-${process.pid}-${Math.random().toString(16).slice(2)}`;

/** The charge-code versions the sandbox serves and the unpinned one: with every list, a run of every target the sandbox serves. */
const ALL_CHARGE_CODE_VERSIONS = '2024-06-11,2025-09-01,unpinned';

/** A source on the sandbox with every list, logging in with the keyed account (its API key as fallback). */
async function tracedSetup(collectorUrl: string, extra: Record<string, string> = {}) {
  const redisPassword = `redis-${Math.random().toString(16).slice(2)}`;
  const redis = await startRedisServer(['--requirepass', redisPassword]);
  const source = sandboxSource(sb, { REFSYNC_ENVIRONMENT: uniqueEnvironment('traces'), REFSYNC_CHARGE_CODE_VERSIONS: ALL_CHARGE_CODE_VERSIONS });
  const redisUrl = `redis://:${redisPassword}@127.0.0.1:${redis.port}`;
  const env = {
    ...workerEnv(sb, source, {
      DATABASE_URL: t.url,
      REDIS_URL: redisUrl,
      REFSYNC_QUEUE_PREFIX: testQueuePrefix(),
      REFSYNC_CHARGE_CODE_VERSIONS: ALL_CHARGE_CODE_VERSIONS,
    }),
    REFSYNC_EMAIL: SANDBOX_KEYED_ACCOUNT.email,
    REFSYNC_PASSWORD: SANDBOX_KEYED_ACCOUNT.password,
    REFSYNC_API_KEY: SANDBOX_KEYED_ACCOUNT.apiKey!,
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${COLLECTOR_TOKEN}`,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    ...extra,
  };
  return { source, env, secrets: [redisPassword, redisUrl, t.url, sb.controlSecret, COLLECTOR_TOKEN] };
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((s) => s.name === name);
}

/** The target spans of lists synced (a first load of each here), not of a try the run job stopped. */
function changedTargets(spans: ReceivedSpan[]): ReceivedSpan[] {
  return byName(spans, 'refsync.target').filter((s) => s.attributes['refsync.status'] === 'changed');
}

/** The list made large in the first test (its run job leaves it to a target job). */
const LARGE = 'nmfc_codes';

describe('tracing', () => {
  it('one trace per run across a trigger and two workers: run span, a target span per target, a target job carrying the trace, client spans under targets, nothing secret', async () => {
    const receiver = await startOtlpReceiver();
    const { source, env, secrets } = await tracedSetup(receiver.url);
    const workerEnvJson = { ...env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', REFSYNC_CONCURRENCY: '2' };
    const workers = [await startWorkerProcess(workerEnvJson), await startWorkerProcess(workerEnvJson)];
    const targets = targetsFor(source).length;
    expect(targets).toBe(everySandboxTarget());
    // Past 5,000 entries: its run job stops it once it proves large and leaves it to a target job,
    // which carries the run's trace in its data to whichever worker takes it.
    sb.control.setGenerated(LARGE, 6000);

    // The trigger exports the default protocol, http/protobuf.
    const trigger = await runCli(['trigger', '--slot', 'traced'], env, 60_000);
    expect(trigger.code, trigger.stderr).toBe(0);
    const run = await runFinished(source, 'traced', 'the traced run to finish', 120_000);
    expect(run.status).toBe('succeeded');

    const spans = await waitFor(
      () => {
        const all = receiver.spans();
        return changedTargets(all).length >= targets && byName(all, 'refsync.run').length >= 1 && all;
      },
      'the workers to export the run',
      60_000,
      200,
    );

    const [runSpan, ...moreRuns] = byName(spans, 'refsync.run');
    expect(moreRuns).toEqual([]);
    expect(runSpan!.attributes['refsync.source']).toBe(source.name);
    expect(runSpan!.attributes['refsync.run_id']).toBe(run.id);
    expect(runSpan!.resource['service.name']).toBe('refsync');
    expect(workers.map((w) => w.pid)).toContain(runSpan!.resource['process.pid']);

    // The trigger's span, in its protobuf export: the run span's trace id and parent span id are in it.
    const protobuf = receiver.requests.filter((r) => r.contentType === 'application/x-protobuf');
    const triggerExport = protobuf.find((r) => r.body.includes('refsync.trigger'));
    expect(triggerExport, 'the trigger exported its span as protobuf').toBeDefined();
    expect(triggerExport!.body.includes(Buffer.from(runSpan!.traceId, 'hex'))).toBe(true);
    expect(runSpan!.parentSpanId).toMatch(/^[0-9a-f]{16}$/);
    expect(triggerExport!.body.includes(Buffer.from(runSpan!.parentSpanId, 'hex'))).toBe(true);

    // A first load of every list; and the large list's first try, in the run job, which it stopped.
    const allTargetSpans = byName(spans, 'refsync.target');
    const targetSpans = changedTargets(spans);
    expect(targetSpans).toHaveLength(targets);
    expect(
      allTargetSpans.filter((s) => s.attributes['refsync.status'] !== 'changed').map((s) => [s.attributes['refsync.list'], s.attributes['refsync.status']]),
    ).toEqual([[LARGE, 'large']]);
    for (const s of allTargetSpans) {
      expect(s.traceId).toBe(runSpan!.traceId);
      expect(s.parentSpanId).toBe(runSpan!.spanId);
    }
    expect(new Set(targetSpans.map((s) => `${s.attributes['refsync.list']}/${s.attributes['refsync.variant']}`)).size).toBe(targets);
    // Every other list was synced by the run job itself, in the run span's process.
    const inRunJob = targetSpans.filter((s) => s.attributes['refsync.list'] !== LARGE);
    expect(new Set(inRunJob.map((s) => s.resource['process.pid']))).toEqual(new Set([runSpan!.resource['process.pid']]));
    expect(workers.map((w) => w.pid)).toContain(targetSpans.find((s) => s.attributes['refsync.list'] === LARGE)!.resource['process.pid']);

    // Upstream requests: client spans under their target, with the contract's attributes.
    const targetIds = new Set(allTargetSpans.map((s) => s.spanId));
    const clients = spans.filter((s) => s.kind === 3);
    for (const c of clients) {
      expect(targetIds.has(c.parentSpanId), `client span ${c.name} ${String(c.attributes['url.path'])} under a target`).toBe(true);
      expect(c.traceId).toBe(runSpan!.traceId);
      expect(c.attributes['http.request.method']).toMatch(/^(GET|POST)$/);
      expect(c.attributes['url.path']).toMatch(/^\//);
      expect(c.attributes['http.response.status_code']).toBe(200);
    }
    for (const id of targetIds)
      expect(
        clients.some((c) => c.parentSpanId === id),
        'every target fetched under its span',
      ).toBe(true);

    for (const w of workers) expect(await w.stop()).toBe(0);
    // The collector saw its header; no body holds it or any other secret.
    expect(receiver.requests.every((r) => r.headers.authorization === `Bearer ${COLLECTOR_TOKEN}`)).toBe(true);
    const bodies = Buffer.concat(receiver.requests.map((r) => r.body));
    const forbidden = [...secrets, ...presented, ...DEFAULT_ACCOUNTS.flatMap((a) => [a.password, ...(a.apiKey ? [a.apiKey] : [])])];
    expect(presented.size, 'the workers logged in and presented a token').toBeGreaterThan(0);
    for (const secret of forbidden) {
      expect(bodies.includes(secret), `an export body holds a secret (${secret.slice(0, 4)}…)`).toBe(false);
    }
    expect(bodies.toString('latin1')).not.toMatch(/authorization|x-sandbox-control|postgres:\/\/|redis:\/\//i);
  }, 300_000);

  it('a collector that hangs: runs still succeed, and each worker warns once, not once per export', async () => {
    // Accepts connections and never answers.
    const sockets = new Set<Socket>();
    const hanging = createServer((s) => sockets.add(s));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    hangingCollectors.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => hanging.close(resolve));
    });
    const port = (hanging.address() as { port: number }).port;
    const { source, env } = await tracedSetup(`http://127.0.0.1:${port}`, { OTEL_EXPORTER_OTLP_TIMEOUT: '300', LOG_LEVEL: 'info' });
    const worker = await startWorkerProcess(env);
    for (const slot of ['hang-1', 'hang-2']) {
      const trigger = await runCli(['trigger', '--slot', slot], env, 60_000);
      expect(trigger.code, trigger.stderr).toBe(0);
      expect((await runFinished(source, slot, `run ${slot} to finish`, 120_000)).status).toBe('succeeded');
    }
    // Several exports have failed by now (one batch every 200 ms while the runs went on).
    await waitFor(() => sockets.size >= 3, 'several export attempts', 30_000, 100);
    expect(await worker.stop()).toBe(0);
    const warnings = worker
      .output()
      .stderr.split('\n')
      .filter((l) => l.includes('cannot export traces'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).not.toContain(COLLECTOR_TOKEN);
  }, 300_000);
});
