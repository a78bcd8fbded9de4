import type { SourceConfig } from '../../config/types.ts';
import type { WorkerMetrics } from '../../server/metrics.ts';
import type { UpstreamClient, UpstreamClientOptions } from '../../upstream/client.ts';
import { createUpstreamClient } from '../../upstream/factory.ts';
import type { Logger } from '../../util/logger.ts';
import type { ResourceStack } from '../worker/resource-stack.ts';

/** The longest Retry-After a job waits for in its slot; longer ones put the job back instead. */
const WORKER_MAX_RETRY_AFTER_MS = 5_000;

/**
 * One upstream client per source, made when a job first needs it and shared by every job of that
 * source (one login, one connection pool); all are closed with the worker.
 */
export function upstreamClients(
  logger: Logger,
  clientOptions: Partial<UpstreamClientOptions> | undefined,
  metrics: WorkerMetrics,
  resources: ResourceStack,
): (source: SourceConfig) => UpstreamClient {
  const clients = new Map<string, UpstreamClient>();
  resources.push('upstream clients', () => Promise.all([...clients.values()].map((c) => c.close())));
  return (source) => {
    let client = clients.get(source.name);
    if (!client) {
      client = createUpstreamClient(source, logger, {
        ...clientOptions,
        // A long Retry-After is not slept on in a job slot: the job goes back to the queue and
        // its source cools down (see SourceGate), so the slot serves other sources meanwhile.
        retry: { maxRetryAfterMs: WORKER_MAX_RETRY_AFTER_MS, ...clientOptions?.retry },
        onRequest: (info) => metrics.upstreamRequest(source.name, info),
      });
      clients.set(source.name, client);
    }
    return client;
  };
}
