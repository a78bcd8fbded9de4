// Redis connections. BullMQ needs two kinds: the worker's (blocking commands; they must wait out an
// outage, so `maxRetriesPerRequest: null`) and producers' (a CLI or a probe must fail fast instead of
// queueing commands while Redis is down: no offline queue, one retry, a short connect timeout).
import { Redis, type Cluster } from 'ioredis';
import { ConfigError } from '../../config/errors.ts';
import type { AppConfig } from '../../config/types.ts';
import { createClusterClient } from './redis-cluster.ts';

/** A connection to Redis: one server (perhaps found through Sentinel) or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** Redis could not be reached or answered an error; the message names the host, never a password. */
export class RedisUnavailableError extends Error {
  readonly code = 'redis_unavailable';
}

/**
 * Host and port of a Redis URL, or the seed nodes of a cluster, for messages (the URL may carry a
 * password, the nodes do not).
 */
export function describeRedis(url: string, reach?: RedisReach): string {
  if (reach?.redisCluster) return `cluster ${reach.redisCluster.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'REDIS_URL';
  }
}

function parseRedisUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError('REDIS_URL: is not a URL (expected redis://host:port or rediss://host:port)');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new ConfigError(`REDIS_URL: must start with redis:// or rediss://, not ${u.protocol}`);
  }
}

/** How to reach Redis beyond its URL (from the configuration): an extra CA, Sentinel, a cluster's nodes. */
export type RedisReach = Pick<AppConfig, 'redisCaPem' | 'redisSentinel' | 'redisCluster'>;

interface ReachOptions {
  tls?: { ca: string };
  sentinels?: Array<{ host: string; port: number }>;
  name?: string;
}

/**
 * The extra CA for a rediss:// URL (REFSYNC_REDIS_CA_FILE), and with Sentinel the sentinels to ask
 * for the current primary of the named group: the URL then gives only credentials, database, TLS.
 */
function reachOptions(url: string, reach: RedisReach | undefined): ReachOptions {
  const options: ReachOptions = {};
  if (reach?.redisCaPem && url.startsWith('rediss://')) options.tls = { ca: reach.redisCaPem };
  if (reach?.redisSentinel) {
    options.sentinels = reach.redisSentinel.sentinels;
    options.name = reach.redisSentinel.name;
  }
  return options;
}

type WorkerConnectionOptions = ReachOptions & { url: string; maxRetriesPerRequest: null; retryStrategy: (times: number) => number };

/**
 * What BullMQ's Worker is given: options it opens its own (normal and blocking) connections from,
 * or on a cluster a Cluster client of the worker's own (BullMQ duplicates it for blocking), which
 * the caller closes once the worker has closed.
 */
export function workerConnection(url: string, reach?: RedisReach): WorkerConnectionOptions | Cluster {
  parseRedisUrl(url);
  if (reach?.redisCluster) {
    return createClusterClient(url, { ...reach, redisCluster: reach.redisCluster }, { kind: 'worker', reconnect: true, connectionName: 'refsync-worker' });
  }
  return {
    url,
    ...reachOptions(url, reach),
    maxRetriesPerRequest: null,
    // Reconnect forever with a capped backoff: a worker outlives any Redis restart.
    retryStrategy: (times: number) => Math.min(200 * times, 5_000),
  };
}

export interface CommandClientOptions {
  /** Keep reconnecting after a loss (the worker's probe) or give up at once (a CLI command). */
  reconnect: boolean;
  connectTimeoutMs?: number;
  connectionName?: string;
  reach?: RedisReach;
}

/** Node's codes for a server certificate that could not be verified. */
const UNTRUSTED_CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

/**
 * A connected ioredis client for non-blocking commands that fails fast: while Redis is away its
 * commands reject at once instead of waiting in the offline queue. Rejects when Redis cannot be
 * reached within the connect timeout (default 3 s).
 */
export async function openCommandClient(url: string, options: CommandClientOptions): Promise<RedisClient> {
  parseRedisUrl(url);
  const timeoutMs = options.connectTimeoutMs ?? 3_000;
  const reconnect = options.reconnect ? (times: number) => Math.min(200 * times, 5_000) : () => null;
  const cluster = options.reach?.redisCluster;
  const client: RedisClient = cluster
    ? createClusterClient(url, { ...options.reach, redisCluster: cluster }, { ...options, kind: 'command', connectTimeoutMs: timeoutMs })
    : new Redis(url, {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: timeoutMs,
        commandTimeout: 5_000,
        ...reachOptions(url, options.reach),
        ...(options.connectionName ? { connectionName: options.connectionName } : {}),
        retryStrategy: reconnect,
      });
  // ioredis emits connection errors as events; without a listener they would be reported as unhandled.
  // The last one says why a connect failed (a TLS failure), where connect() only says it closed.
  let lastError: NodeJS.ErrnoException | undefined;
  client.on('error', (err: NodeJS.ErrnoException) => {
    lastError = err;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    client.disconnect();
    const cause = lastError ?? (err as NodeJS.ErrnoException);
    const reason = cause.code ?? cause.message;
    if (UNTRUSTED_CERTIFICATE.test(reason)) {
      throw new ConfigError(
        `REFSYNC_REDIS_CA_FILE: the TLS certificate of Redis at ${describeRedis(url, options.reach)} is not trusted (${reason}); set it to the CA that signed it`,
      );
    }
    throw new RedisUnavailableError(`Redis at ${describeRedis(url, options.reach)} is not reachable (${reason.split('\n')[0]})`);
  } finally {
    clearTimeout(timer);
  }
  return client;
}

/** Closes a client, waiting for pending replies when it is connected. */
export async function closeClient(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    await client.quit().catch(() => client.disconnect());
  } else {
    client.disconnect();
  }
}

/** The eviction policy of one Redis server (CONFIG GET where allowed, else INFO, which managed Redis keeps). */
async function serverEvictionPolicy(client: Redis): Promise<string> {
  try {
    const reply = (await client.config('GET', 'maxmemory-policy')) as unknown as string[];
    if (Array.isArray(reply) && typeof reply[1] === 'string') return reply[1];
  } catch {
    // CONFIG is often disabled on managed Redis; INFO carries the same value.
  }
  const info = await client.info('memory');
  const match = /^maxmemory_policy:(\S+)/m.exec(info);
  return match?.[1] ?? 'unknown';
}

function isCluster(client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true;
}

/** The eviction policy of Redis; on a cluster, the first primary's that is not noeviction (else noeviction). */
export async function evictionPolicy(client: RedisClient): Promise<string> {
  if (!isCluster(client)) return serverEvictionPolicy(client);
  const policies = await Promise.all(client.nodes('master').map(serverEvictionPolicy));
  return policies.find((p) => p !== 'noeviction') ?? 'noeviction';
}

/**
 * Refuses a Redis that may evict keys: under memory pressure it would silently drop queued jobs,
 * locks and schedules, and runs would be lost without an error anywhere.
 */
export async function assertNoEviction(client: RedisClient, url: string, reach?: RedisReach): Promise<void> {
  const policy = await evictionPolicy(client);
  if (policy !== 'noeviction') {
    throw new ConfigError(
      `REDIS_URL: Redis at ${describeRedis(url, reach)} has maxmemory-policy '${policy}'; refsync needs 'noeviction', ` +
        'since an evicting Redis silently drops queued jobs and schedules (set maxmemory-policy noeviction)',
    );
  }
}

/**
 * Refuses a cluster-mode Redis reached as a single server (REDIS_URL alone): its keys would be
 * spread over slots that one connection cannot follow. REDIS_CLUSTER_NODES is the way to use one.
 */
export async function assertNotCluster(client: RedisClient, url: string, reach?: RedisReach): Promise<void> {
  if (reach?.redisCluster || isCluster(client)) return;
  const info = await client.info('cluster').catch(() => '');
  if (/^cluster_enabled:1/m.test(info)) {
    throw new ConfigError(
      `REDIS_URL: Redis at ${describeRedis(url)} runs in cluster mode; set REDIS_CLUSTER_NODES to its nodes (host:port, comma-separated) to use it as a cluster`,
    );
  }
}
