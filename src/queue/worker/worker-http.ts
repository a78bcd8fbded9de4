import { ConfigError } from '../../config/errors.ts';
import type { AppConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import { createHttpApp, startHttpServer, type HttpApp, type HttpServer, type ReadyReport } from '../../server/http.ts';
import type { WorkerMetrics } from '../../server/metrics.ts';
import { statusPages } from '../../server/status-pages.ts';
import type { ResourceStack } from './resource-stack.ts';

export interface WorkerHttpParts {
  db: Database;
  metrics: WorkerMetrics;
  readiness(): Promise<ReadyReport>;
}

/**
 * Health, readiness, metrics, the status page and the dashboard. Started before Redis is
 * connected, so /readyz can say what the worker is still waiting for; the queues are handed to the
 * dashboard (setQueues) once they exist.
 */
export async function startWorkerHttp(config: AppConfig, parts: WorkerHttpParts, resources: ResourceStack): Promise<{ web: HttpApp; http: HttpServer }> {
  const web = createHttpApp({
    readiness: parts.readiness,
    metrics: parts.metrics,
    statusPages: statusPages(parts.db, config.sources, config.dashboardPassword !== undefined),
    ...(config.dashboardPassword ? { dashboardPassword: config.dashboardPassword } : {}),
    dashboardWrite: config.dashboardWrite === true && config.dashboardPassword !== undefined,
    allowedHosts: config.allowedHosts ?? [],
  });
  const http = await startHttpServer(web.app, config.httpHost, config.httpPort).catch((err: NodeJS.ErrnoException) => {
    throw new ConfigError(`REFSYNC_HTTP_PORT: cannot listen on ${config.httpHost}:${config.httpPort} (${err.code ?? err.message})`);
  });
  resources.push('http', () => http.close());
  return { web, http };
}
