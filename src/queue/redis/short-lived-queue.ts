import { Queue } from 'bullmq';
import type { AppConfig } from '../../config/types.ts';
import { closeClient, openCommandClient, type RedisClient } from './connection.ts';
import { QUEUE_NAME, queueKeyPrefix } from './names.ts';

export interface ShortLivedQueueOptions {
  /** The client's name in Redis's CLIENT LIST. */
  connectionName: string;
  connectTimeoutMs: number;
  /** Redis key prefix; default REFSYNC_QUEUE_PREFIX or `refsync`. */
  prefix?: string;
  /** The command only reads the queue: it leaves the queue's meta hash as it is (BullMQ writes it on open otherwise). */
  readOnly?: boolean;
}

/**
 * Runs `use` with the sync queue on a client of its own for one CLI command, then closes both.
 * Fails fast when Redis is down: a short connect timeout, no reconnect, no offline queue.
 */
export async function withShortLivedQueue<T>(
  config: AppConfig,
  options: ShortLivedQueueOptions,
  use: (queue: Queue, client: RedisClient) => Promise<T>,
): Promise<T> {
  const client = await openCommandClient(config.redisUrl, {
    reconnect: false,
    connectTimeoutMs: options.connectTimeoutMs,
    connectionName: options.connectionName,
    reach: config,
  });
  const queue = new Queue(QUEUE_NAME, { connection: client, prefix: queueKeyPrefix(config, options.prefix), skipMetasUpdate: options.readOnly ?? false });
  // Errors reach the caller through the command that failed; the event would only repeat them.
  queue.on('error', () => undefined);
  try {
    return await use(queue, client);
  } finally {
    await queue.close().catch(() => undefined);
    await closeClient(client);
  }
}
