// The queue part of `refsync status`: which Redis it read, always named (a REDIS_URL left unset reads
// database 0 of a local Redis, which may be another deployment's), and nothing at all where no
// worker is configured (after `refsync demo`, or a data team's DATABASE_URL alone).
import type { AppConfig } from '../../config/types.ts';
import { describeRedis } from '../../queue/redis/connection.ts';
import { queueSummary, type QueueSummary } from '../../queue/redis/summary.ts';
import { queuePrefix } from '../../queue/redis/names.ts';
import { formatTime } from '../../read/format-time.ts';
import { terminalText } from '../output/terminal.ts';

type Env = Record<string, string | undefined>;

export interface QueuePart {
  queue: QueueSummary | { error: string } | null;
  lines: string[];
}

const redisSettings = ['REDIS_URL', 'REDIS_URL_FILE', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'];

/** Whether this environment points at a Redis at all, rather than leaving the default. */
function redisConfigured(env: Env): boolean {
  return redisSettings.some((name) => (env[name] ?? '') !== '');
}

/** `Redis 127.0.0.1:6379 db 0, prefix refsync`, and that it is the default when nothing named a Redis. */
export function redisRead(config: AppConfig, env: Env): string {
  let db = '0';
  try {
    db = new URL(config.redisUrl).pathname.replace(/^\//, '') || '0';
  } catch {
    // describeRedis names an unparsable URL by its setting; the database stays the default.
  }
  const where = `Redis ${describeRedis(config.redisUrl, config)}${config.redisCluster ? '' : ` db ${db}`}, prefix ${queuePrefix(env)}`;
  return redisConfigured(env) ? where : `${where} (the default: REDIS_URL unset)`;
}

function summaryLines(queue: QueueSummary, where: string): string[] {
  const c = queue.counts;
  const lines = [
    `queue: ${c.wait ?? 0} waiting, ${c.active ?? 0} active, ${c.delayed ?? 0} delayed, ${c.failed ?? 0} failed, ${c.completed ?? 0} completed`,
    `  ${where}`,
  ];
  for (const s of queue.schedulers) lines.push(`  schedule ${s.source}: '${s.pattern}' (${s.tz}), next ${s.next ? formatTime(s.next) : 'none'}`);
  if (queue.schedulers.length === 0) lines.push('  no schedules installed (start `refsync worker`)');
  return lines;
}

/** The queue's state, or why it is not shown; nothing when this environment configures no worker. */
export async function queuePart(config: AppConfig | undefined, configProblem: string | undefined, env: Env): Promise<QueuePart> {
  if (!config) {
    if (!redisConfigured(env)) return { queue: null, lines: [] };
    const why = terminalText(configProblem ?? 'unknown');
    return { queue: null, lines: [`queue: not read: the worker's settings are incomplete here (${why}); set them as the worker has them`] };
  }
  const where = terminalText(redisRead(config, env));
  try {
    const queue = await queueSummary(config);
    return { queue, lines: summaryLines(queue, where) };
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? 'unreachable';
    return { queue: { error: message }, lines: [`queue: unavailable (${terminalText(message)})`, `  ${where}`] };
  }
}
