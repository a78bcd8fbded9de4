// `refsync trigger` as a library: enqueue a manual run per source through Redis, failing fast when
// Redis is down (no offline queue, no reconnect).
import type { ListKey } from '../catalog/list-keys.ts';
import type { AppConfig } from '../config/types.ts';
import { assertNoEviction, assertNotCluster } from './connection.ts';
import { enqueueManualRuns, type EnqueuedRun } from './jobs.ts';
import { withShortLivedQueue } from './short-lived-queue.ts';

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
    await assertNotCluster(client, config.redisUrl);
    await assertNoEviction(client, config.redisUrl);
    const enqueue: { slot?: string; lists?: ListKey[]; acceptRemovals?: boolean; acceptSchema?: boolean } = {};
    if (options.slot) enqueue.slot = options.slot;
    if (options.acceptRemovals) enqueue.acceptRemovals = true;
    if (options.acceptSchema) enqueue.acceptSchema = true;
    if (options.lists) enqueue.lists = options.lists;
    return enqueueManualRuns(queue, config.sources, enqueue);
  });
}
