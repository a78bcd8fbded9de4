import { Queue } from 'bullmq';
import type { AppConfig } from '../../config/types.ts';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';
import { assertNoEviction, assertNotCluster, closeClient, openCommandClient, type RedisClient } from '../redis/connection.ts';
import type { SyncJobData } from '../jobs.ts';
import { QUEUE_NAME } from '../redis/names.ts';
import type { ResourceStack } from './resource-stack.ts';

/**
 * The worker's command connection to Redis (reconnecting; refused when Redis may evict keys, or is
 * a cluster reached as a single server) and the queue on it.
 */
export async function openWorkerQueue(
  config: AppConfig,
  prefix: string,
  logger: Logger,
  resources: ResourceStack,
): Promise<{ commands: RedisClient; queue: Queue<SyncJobData> }> {
  const commands = await openCommandClient(config.redisUrl, { reconnect: true, connectionName: 'refsync-worker-commands', reach: config });
  resources.push('redis', () => closeClient(commands));
  await assertNotCluster(commands, config.redisUrl, config);
  await assertNoEviction(commands, config.redisUrl, config);

  // The queue shares the fail-fast command client: while Redis is away its commands fail at
  // once (a fan-out job is then retried) instead of piling up in memory.
  const queue = new Queue<SyncJobData>(QUEUE_NAME, { connection: commands, prefix });
  queue.on('error', (err) => logger.warn({ err: errorLine(err) }, 'queue connection error'));
  resources.push('queue', () => queue.close());
  return { commands, queue };
}
