// The worker's HTTP side: /healthz (the process answers), /readyz (its dependencies answer),
// /metrics (Prometheus), the status pages (/, /list, /run) and the BullMQ dashboard at /admin/queues
// (these two behind basic auth, user `admin`, when REFSYNC_DASHBOARD_PASSWORD is set; the dashboard
// read-only unless REFSYNC_DASHBOARD_WRITE=true). The pages and the dashboard answer only to
// localhost, IP literals and REFSYNC_HTTP_ALLOWED_HOSTS; every state-changing request must be JSON
// and, when it says where it comes from, same-origin (request-guards.ts). Bound to REFSYNC_HTTP_HOST
// (127.0.0.1 by default).
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serve, type ServerType } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import { Hono, type MiddlewareHandler } from 'hono';
import { basicAuth } from 'hono/basic-auth';
import { dashboardPage } from './dashboard-page.ts';
import type { WorkerMetrics } from './metrics.ts';
import type { StatusPage } from './status-pages.ts';
import { hostGuard, readOnly, writeGuard } from './request-guards.ts';
import { sharedAnswer } from '../util/shared-answer.ts';

export const DASHBOARD_PATH = '/admin/queues';
export const DASHBOARD_USER = 'admin';

export interface ReadyReport {
  ready: boolean;
  /** Each dependency: 'ok' or what failed. */
  checks: Record<string, string>;
}

export interface HttpAppOptions {
  readiness(): Promise<ReadyReport>;
  metrics: WorkerMetrics;
  dashboardPassword?: string;
  /** The status pages by path (src/server/status-pages.ts): HTML, or undefined for 404. */
  statusPages: Record<string, StatusPage>;
  /** Whether the dashboard may change the queue (REFSYNC_DASHBOARD_WRITE); read-only when absent. */
  dashboardWrite?: boolean;
  /** Host names besides localhost and IP literals that the page and the dashboard answer to (lower case). */
  allowedHosts?: readonly string[];
}

// The status pages have no script and no inline style: their CSP allows only same-origin resources.
const pageHeaders = { 'content-security-policy': "default-src 'self'", 'x-content-type-options': 'nosniff' };
const asset = (name: string) => readFileSync(new URL(name, import.meta.url), 'utf8');
const statusCss = asset('status-page.css');
const favicon = asset('favicon.svg');

export interface HttpApp {
  app: Hono;
  /** Shows these queues on the dashboard (the server starts before Redis is connected). */
  setQueues(queues: Queue[]): void;
}

/** The probes answer whatever the Host: a load balancer or Prometheus may use any name. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = new Hono();
  const writable = options.dashboardWrite === true;
  app.use('*', hostGuard(new Set(options.allowedHosts ?? []), PROBES), writeGuard);
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  // One readiness check at a time, its answer reused for a second: a burst of probes costs one.
  const readiness = sharedAnswer(options.readiness, 1_000);
  app.get('/readyz', async (c) => {
    const report = await readiness();
    return c.json({ status: report.ready ? 'ready' : 'not ready', checks: report.checks }, report.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const text = await options.metrics.text();
    return c.body(text, 200, { 'content-type': options.metrics.contentType });
  });

  const board = new HonoAdapter(serveStatic);
  const bullBoard = createBullBoard({
    queues: [],
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'refsync' } },
  });
  board.setBasePath(DASHBOARD_PATH);
  if (options.dashboardPassword) {
    const auth = basicAuth({ username: DASHBOARD_USER, password: options.dashboardPassword, realm: 'refsync' });
    for (const path of [...Object.keys(options.statusPages), '/status.css', '/favicon.svg', DASHBOARD_PATH, `${DASHBOARD_PATH}/*`]) app.use(path, auth);
  }
  for (const [path, render] of Object.entries(options.statusPages)) {
    app.get(path, async (c) => {
      try {
        const page = await render(new URL(c.req.url).searchParams);
        return page === undefined ? c.text('refsync: no such list or run\n', 404, pageHeaders) : c.html(page, 200, pageHeaders);
      } catch (err) {
        const why = (err as Error).message.split('\n')[0]!;
        return c.text(`refsync: the status page cannot read Postgres: ${why}\n`, 503, pageHeaders);
      }
    });
  }
  app.get('/status.css', (c) => c.body(statusCss, 200, { ...pageHeaders, 'content-type': 'text/css; charset=utf-8' }));
  app.get('/favicon.svg', (c) => c.body(favicon, 200, { ...pageHeaders, 'content-type': 'image/svg+xml' }));
  const dashboard: MiddlewareHandler[] = writable ? [dashboardPage({ writable })] : [readOnly, dashboardPage({ writable })];
  for (const path of [DASHBOARD_PATH, `${DASHBOARD_PATH}/*`]) app.use(path, ...dashboard);
  app.route(DASHBOARD_PATH, board.registerPlugin());
  return {
    app,
    // readOnlyMode hides the dashboard's buttons; the readOnly middleware is what refuses the requests.
    setQueues: (queues) => bullBoard.replaceQueues(queues.map((q) => new BullMQAdapter(q, { readOnlyMode: !writable }))),
  };
}

export interface HttpServer {
  port: number;
  host: string;
  close(): Promise<void>;
}

/** Listens on host:port (0 = a free port); rejects when the port is taken. */
export async function startHttpServer(app: Hono, host: string, port: number): Promise<HttpServer> {
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    port: address.port,
    host,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets (a scraper, the dashboard) would hold close() open.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      return closing;
    },
  };
}
