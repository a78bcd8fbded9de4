// `refsync trigger` as a library: enqueue a manual run per source through Redis, failing fast when
// Redis is down (no offline queue, no reconnect).
import type { ListKey } from '../catalog/list-keys.ts';
import type { AppConfig } from '../config/types.ts';
import { inSpan, traceCarrier, type TraceCarrier } from '../tracing/spans.ts';
import { assertNoEviction, assertNotCluster } from './connection.ts';
import { enqueueManualRuns, type EnqueuedRun } from './jobs.ts';
import { withShortLivedQueue } from './short-lived-queue.ts';

export interface TriggerOptions {
  lists?: ListKey[];
  /** Reuse a slot to make the trigger idempotent (a retried cron job, a deploy hook). */
  slot?: string;
  /** Apply fetches that would retire too much, as `sync --accept-removals` does. */
  acceptRemovals?: boolean;
  prefix?: string;
  connectTimeoutMs?: number;
}

export async function triggerRuns(config: AppConfig, options: TriggerOptions = {}): Promise<EnqueuedRun[]> {
  const connection = { connectionName: 'refsync-trigger', connectTimeoutMs: options.connectTimeoutMs ?? 3_000, prefix: options.prefix };
  return withShortLivedQueue(config, connection, async (queue, client) => {
    await assertNotCluster(client, config.redisUrl, config);
    await assertNoEviction(client, config.redisUrl, config);
    const enqueue: { slot?: string; lists?: ListKey[]; acceptRemovals?: boolean; trace?: TraceCarrier } = {};
    if (options.slot) enqueue.slot = options.slot;
    if (options.acceptRemovals) enqueue.acceptRemovals = true;
    if (options.lists) enqueue.lists = options.lists;
    // With tracing on, the run's trace starts here and travels in the run job.
    return inSpan('refsync.trigger', { attributes: { 'refsync.sources': config.sources.map((s) => s.name) } }, async () => {
      const trace = traceCarrier();
      if (trace) enqueue.trace = trace;
      return enqueueManualRuns(queue, config.sources, enqueue);
    });
  });
}
