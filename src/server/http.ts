// The worker's HTTP side: /healthz (the process answers), /readyz (its dependencies answer),
// /metrics (Prometheus) and the BullMQ dashboard at /admin/queues (basic auth, user `admin`, when
// REFSYNC_DASHBOARD_PASSWORD is set). Bound to REFSYNC_HTTP_HOST (127.0.0.1 by default).
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serve, type ServerType } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import { Hono } from 'hono';
import { basicAuth } from 'hono/basic-auth';
import type { WorkerMetrics } from './metrics.ts';

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
}

export interface HttpApp {
  app: Hono;
  /** Shows these queues on the dashboard (the server starts before Redis is connected). */
  setQueues(queues: Queue[]): void;
}

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const report = await options.readiness();
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
    app.use(DASHBOARD_PATH, auth);
    app.use(`${DASHBOARD_PATH}/*`, auth);
  }
  app.route(DASHBOARD_PATH, board.registerPlugin());
  return {
    app,
    setQueues: (queues) => bullBoard.replaceQueues(queues.map((q) => new BullMQAdapter(q))),
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
