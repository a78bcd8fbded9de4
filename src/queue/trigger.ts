// `refsync trigger` as a library: enqueue a manual run per source through Redis, failing fast when
// Redis is down (no offline queue, no reconnect).
import type { ListKey } from '../catalog/list-keys.ts';
import type { AppConfig } from '../config/types.ts';
import { inSpan, traceCarrier } from '../tracing/spans.ts';
import { assertNoEviction, assertNotCluster } from './redis/connection.ts';
import { enqueueManualRuns, type EnqueuedRun } from './jobs.ts';
import { manualSlot } from './redis/names.ts';
import { withShortLivedQueue } from './redis/short-lived-queue.ts';

export interface TriggerOptions {
  lists?: ListKey[];
  /** Reuse a slot to make the trigger idempotent (a retried cron job, a deploy hook). */
  slot?: string;
  /** Apply fetches that would retire too much, as `sync --accept-removals` does. */
  acceptRemovals?: boolean;
  /** Apply the lists' held column changes once, as `sync --list KEY --accept-schema` does. */
  acceptSchema?: boolean;
  prefix?: string;
  connectTimeoutMs?: number;
}

export async function triggerRuns(config: AppConfig, options: TriggerOptions = {}): Promise<EnqueuedRun[]> {
  const connection = { connectionName: 'refsync-trigger', connectTimeoutMs: options.connectTimeoutMs ?? 3_000, prefix: options.prefix };
  return withShortLivedQueue(config, connection, async (queue, client) => {
    await assertNotCluster(client, config.redisUrl, config);
    await assertNoEviction(client, config.redisUrl, config);
    // One slot for every source of this trigger, as before; one trace per run: with tracing on,
    // each source's run starts its own trace here (refsync.trigger), carried in its run job.
    const enqueue: { slot: string; lists?: ListKey[]; acceptRemovals?: boolean; acceptSchema?: boolean } = { slot: options.slot ?? manualSlot() };
    if (options.acceptRemovals) enqueue.acceptRemovals = true;
    if (options.acceptSchema) enqueue.acceptSchema = true;
    if (options.lists) enqueue.lists = options.lists;
    const runs: EnqueuedRun[] = [];
    for (const source of config.sources) {
      const attributes = { 'refsync.source': source.name, 'refsync.slot': enqueue.slot };
      const enqueued = await inSpan('refsync.trigger', { attributes }, () => {
        const trace = traceCarrier();
        return enqueueManualRuns(queue, [source], trace ? { ...enqueue, trace } : enqueue);
      });
      runs.push(...enqueued);
    }
    return runs;
  });
}
