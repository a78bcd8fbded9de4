// The worker's port against a real worker: what a web page in the operator's browser can send (a
// cross-site `text/plain` POST or form post, cached Basic credentials attached; a request through a
// DNS-rebound host name) adds no job and pauses no queue, read-only by default or writable with a
// password; the probes answer any Host; the allowed requests work.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { startTestWorker, workerConfig, testQueuePrefix } from '../queue/helpers.ts';
import type { WorkerService } from '../../src/queue/worker/service.ts';

const tdb = useTestDatabase();
const PASSWORD = 'board-pass';
const basic = { authorization: `Basic ${btoa(`admin:${PASSWORD}`)}` };
const EVIL = 'http://evil.example';

interface Answer {
  status: number;
  text: string;
}

/** One request with the headers given as sent (Host and Origin included), over a real socket. */
function send(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The queue's observable state: every job there is, by id, and whether it is paused. */
async function queueState(worker: WorkerService) {
  const jobs = await worker.queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized', 'waiting-children']);
  return { jobs: jobs.map((j) => `${j.id}:${j.name}`).sort(), paused: await worker.queue.isPaused() };
}

const ADD = '/admin/queues/api/queues/sync/add';
const PAUSE = '/admin/queues/api/queues/sync/pause';
const RESUME = '/admin/queues/api/queues/sync/resume';
const runJob = JSON.stringify({ name: 'run', data: { kind: 'run', source: 'guard-env', acceptRemovals: true }, options: {} });

/** Every hostile request of the family; each must leave the queue as it was. */
function hostileRequests(port: number, auth: Record<string, string>) {
  const rebound = `evil.example:${port}`;
  return [
    // A cross-site fetch with mode no-cors or a form post: a simple request, no preflight.
    {
      what: 'text/plain POST from another origin',
      method: 'POST',
      path: ADD,
      headers: { ...auth, origin: EVIL, 'content-type': 'text/plain;charset=UTF-8' },
      body: runJob,
    },
    {
      what: 'form post from another origin',
      method: 'POST',
      path: ADD,
      headers: { ...auth, origin: EVIL, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=run',
    },
    {
      what: 'multipart PUT pause from another origin',
      method: 'PUT',
      path: PAUSE,
      headers: { ...auth, origin: EVIL, 'content-type': 'multipart/form-data; boundary=x' },
      body: '--x--',
    },
    { what: 'bodyless PUT pause from another origin', method: 'PUT', path: PAUSE, headers: { ...auth, origin: EVIL } },
    { what: 'JSON POST from another origin', method: 'POST', path: ADD, headers: { ...auth, origin: EVIL, 'content-type': 'application/json' }, body: runJob },
    { what: "JSON PUT pause from Origin 'null'", method: 'PUT', path: PAUSE, headers: { ...auth, origin: 'null', 'content-type': 'application/json' } },
    // DNS rebinding: the attacker's name now points here, so its page is same-origin with it.
    {
      what: 'rebound Host, same-origin JSON POST',
      method: 'POST',
      path: ADD,
      headers: { ...auth, host: rebound, origin: `http://${rebound}`, 'content-type': 'application/json' },
      body: runJob,
    },
    {
      what: 'rebound Host, same-origin JSON PUT pause',
      method: 'PUT',
      path: PAUSE,
      headers: { ...auth, host: rebound, origin: `http://${rebound}`, 'content-type': 'application/json' },
    },
  ];
}

async function expectAllRefused(worker: WorkerService, auth: Record<string, string>) {
  const port = worker.http.port;
  const before = await queueState(worker);
  const refused: Record<string, number> = {};
  for (const r of hostileRequests(port, auth)) refused[r.what] = (await send(port, r.method, r.path, r.headers, r.body)).status;
  for (const [what, status] of Object.entries(refused)) expect([403, 405, 415, 421], what).toContain(status);
  expect(await queueState(worker)).toEqual(before);
  expect(before.paused).toBe(false);
  return refused;
}

describe('the worker HTTP server against a hostile web page', () => {
  it('default settings: read-only dashboard; cross-site and rebound requests change nothing; probes answer any Host', async () => {
    const sb = await useSandbox();
    const worker = await startTestWorker(
      workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'guard-env', REFSYNC_LISTS: 'shipment_modes', REFSYNC_HTTP_ALLOWED_HOSTS: 'refsync.internal' }),
      testQueuePrefix(),
    );
    const port = worker.http.port;
    const refused = await expectAllRefused(worker, {});
    expect(refused['text/plain POST from another origin']).toBe(415);
    expect(refused['JSON POST from another origin']).toBe(403);
    expect(refused['rebound Host, same-origin JSON POST']).toBe(421);

    // Even a same-origin JSON request cannot change a read-only dashboard.
    const same = { origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json' };
    expect((await send(port, 'PUT', PAUSE, same)).status).toBe(405);
    expect((await send(port, 'POST', ADD, same, runJob)).status).toBe(405);
    expect(await worker.queue.isPaused()).toBe(false);

    // A rebound name reads nothing either; the probes answer whatever the Host.
    for (const path of ['/', '/admin/queues', '/admin/queues/api/queues', '/status.css']) {
      expect((await send(port, 'GET', path, { host: 'evil.example' })).status, path).toBe(421);
    }
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      expect((await send(port, 'GET', path, { host: 'evil.example' })).status, path).toBe(200);
    }
    // localhost, IP literals and the listed names are answered.
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'REFSYNC.internal', `refsync.internal:${port}`]) {
      const api = await send(port, 'GET', '/admin/queues/api/queues', { host });
      expect(api.status, host).toBe(200);
      expect(JSON.parse(api.text).queues[0]).toMatchObject({ name: 'sync', readOnlyMode: true });
    }
  });

  it('REFSYNC_DASHBOARD_WRITE=true: cached Basic credentials do not carry a cross-site or rebound request; a same-origin JSON one works', async () => {
    const sb = await useSandbox();
    const worker = await startTestWorker(
      workerConfig(sb, tdb.url, {
        REFSYNC_ENVIRONMENT: 'guard-env',
        REFSYNC_LISTS: 'shipment_modes',
        REFSYNC_DASHBOARD_PASSWORD: PASSWORD,
        REFSYNC_DASHBOARD_WRITE: 'true',
      }),
      testQueuePrefix(),
    );
    const port = worker.http.port;
    const refused = await expectAllRefused(worker, basic);
    expect(refused['text/plain POST from another origin']).toBe(415);
    expect(refused['bodyless PUT pause from another origin']).toBe(415);
    expect(refused['JSON POST from another origin']).toBe(403);
    expect(refused['rebound Host, same-origin JSON PUT pause']).toBe(421);

    // The dashboard's own requests: same origin, JSON (its page marks its bodyless PUTs as JSON).
    const page = await send(port, 'GET', '/admin/queues', basic);
    expect(page.status).toBe(200);
    expect(page.text).toContain("set.call(this, 'Content-Type', 'application/json')");
    const same = { ...basic, origin: `http://localhost:${port}`, host: `localhost:${port}`, 'content-type': 'application/json' };
    expect((await send(port, 'PUT', PAUSE, same)).status).toBe(200);
    expect(await worker.queue.isPaused()).toBe(true);
    // A tool that sends no Origin (curl, a script) is not a browser page: JSON is enough.
    expect((await send(port, 'PUT', RESUME, { ...basic, 'content-type': 'application/json' })).status).toBe(200);
    expect(await worker.queue.isPaused()).toBe(false);
    expect((await send(port, 'PUT', PAUSE, { ...same, authorization: `Basic ${btoa('admin:wrong')}` })).status).toBe(401);
    expect(await worker.queue.isPaused()).toBe(false);
  });

  it('REFSYNC_DASHBOARD_WRITE=true without a password, or a malformed host list, is refused at start in one line', async () => {
    const env = { ...sandboxEnv(await useSandbox()), DATABASE_URL: tdb.url };
    expect(() => loadConfig({ ...env, REFSYNC_DASHBOARD_WRITE: 'true' })).toThrow(
      /^REFSYNC_DASHBOARD_WRITE: is true, but REFSYNC_DASHBOARD_PASSWORD is not set; a dashboard that can change the queue needs a password$/,
    );
    expect(() => loadConfig({ ...env, REFSYNC_DASHBOARD_WRITE: 'maybe' })).toThrow(/^REFSYNC_DASHBOARD_WRITE: expected true or false/);
    expect(() => loadConfig({ ...env, REFSYNC_HTTP_ALLOWED_HOSTS: 'ok.example,https://x.example' })).toThrow(
      /^REFSYNC_HTTP_ALLOWED_HOSTS: 'https:\/\/x.example' is not a host name/,
    );
    expect(loadConfig({ ...env, REFSYNC_DASHBOARD_WRITE: 'true', REFSYNC_DASHBOARD_PASSWORD: PASSWORD })).toMatchObject({
      dashboardWrite: true,
      allowedHosts: [],
    });
  });
});
