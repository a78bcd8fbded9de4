// The queue's state for `refsync status`: job counts and the schedulers with their next run.
// Fails fast when Redis is down (see short-lived-queue.ts).
import type { AppConfig } from '../../config/types.ts';
import { sourceOfScheduler } from './names.ts';
import { withShortLivedQueue } from './short-lived-queue.ts';

export interface QueueSummary {
  counts: Record<string, number>;
  schedulers: { source: string; pattern: string; tz: string; next: string | null }[];
}

export async function queueSummary(config: AppConfig, options: { prefix?: string; connectTimeoutMs?: number } = {}): Promise<QueueSummary> {
  const connection = { connectionName: 'refsync-status', connectTimeoutMs: options.connectTimeoutMs ?? 2_000, prefix: options.prefix, readOnly: true };
  return withShortLivedQueue(config, connection, async (queue) => {
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
  });
}
