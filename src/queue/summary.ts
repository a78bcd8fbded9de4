// The queue's state for `refsync status`: job counts and the schedulers with their next run.
// Fails fast (a short connect timeout, no reconnect, no offline queue) when Redis is down.
import { Queue } from 'bullmq';
import type { AppConfig } from '../config/types.ts';
import { closeClient, openCommandClient } from './connection.ts';
import { QUEUE_NAME, queuePrefix, sourceOfScheduler } from './names.ts';

export interface QueueSummary {
  counts: Record<string, number>;
  schedulers: { source: string; pattern: string; tz: string; next: string | null }[];
}

export async function queueSummary(config: AppConfig, options: { prefix?: string; connectTimeoutMs?: number } = {}): Promise<QueueSummary> {
  const client = await openCommandClient(config.redisUrl, {
    reconnect: false,
    connectTimeoutMs: options.connectTimeoutMs ?? 2_000,
    connectionName: 'refsync-status',
    reach: config,
  });
  const queue = new Queue(QUEUE_NAME, { connection: client, prefix: options.prefix ?? queuePrefix() });
  queue.on('error', () => undefined);
  try {
    const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed');
    const schedulers = [];
    for (const s of await queue.getJobSchedulers(0, -1, true)) {
      const source = sourceOfScheduler(s.id ?? s.key);
      if (source === undefined) continue;
      schedulers.push({
        source,
        pattern: s.pattern ?? (s.every ? `every ${s.every} ms` : ''),
        tz: s.tz ?? 'UTC',
        next: s.next ? new Date(s.next).toISOString() : null,
      });
    }
    return { counts, schedulers };
  } finally {
    await queue.close().catch(() => undefined);
    await closeClient(client);
  }
}
