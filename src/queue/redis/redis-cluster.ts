// A Redis Cluster (REDIS_CLUSTER_NODES): ioredis's Cluster client, seeded with those nodes and given
// the credentials and TLS of REDIS_URL (whose host is not used, as with Sentinel). A cluster has no
// database other than 0, and a queue's keys must share one hash slot (names.ts#queueKeyPrefix).
import { Cluster, type ClusterOptions } from 'ioredis';
import { ConfigError } from '../../config/errors.ts';
import type { AppConfig } from '../../config/types.ts';

export type ClusterReach = Pick<AppConfig, 'redisCaPem' | 'redisCluster'>;

type NodeOptions = NonNullable<ClusterOptions['redisOptions']>;

/** What every node connection takes from REDIS_URL: the ACL user and password, TLS and its extra CA. */
export function nodeOptionsFromUrl(url: string, reach: ClusterReach): NodeOptions {
  const u = new URL(url);
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && db !== '0') {
    throw new ConfigError(`REDIS_URL: names database ${db}, but a Redis Cluster (REDIS_CLUSTER_NODES) has only database 0`);
  }
  const options: NodeOptions = {};
  if (u.username) options.username = decodeURIComponent(u.username);
  if (u.password) options.password = decodeURIComponent(u.password);
  if (u.protocol === 'rediss:') options.tls = reach.redisCaPem ? { ca: reach.redisCaPem } : {};
  return options;
}

export interface ClusterClientOptions {
  /** The worker's own connection for BullMQ (commands wait out a failover) or a fail-fast one. */
  kind: 'worker' | 'command';
  reconnect: boolean;
  connectTimeoutMs?: number;
  connectionName?: string;
}

/** A Cluster client, not yet connected (lazyConnect). */
export function createClusterClient(
  url: string,
  reach: ClusterReach & { redisCluster: NonNullable<ClusterReach['redisCluster']> },
  options: ClusterClientOptions,
): Cluster {
  const worker = options.kind === 'worker';
  const redisOptions: NodeOptions = {
    ...nodeOptionsFromUrl(url, reach),
    connectTimeout: options.connectTimeoutMs ?? 3_000,
    // BullMQ refuses a blocking connection that gives up on commands; a CLI must fail fast instead.
    maxRetriesPerRequest: worker ? null : 1,
    ...(worker ? {} : { commandTimeout: 5_000 }),
    ...(options.connectionName ? { connectionName: options.connectionName } : {}),
  };
  return new Cluster(reach.redisCluster.nodes, {
    lazyConnect: true,
    // While a failover is under way the worker's commands wait for the new primary; a CLI's fail.
    enableOfflineQueue: worker,
    redisOptions,
    clusterRetryStrategy: options.reconnect ? (times: number) => Math.min(200 * times, 5_000) : () => null,
    // A node that went away is asked for the slots again soon, so a promoted replica is found.
    slotsRefreshTimeout: 2_000,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
  });
}
