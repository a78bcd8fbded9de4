// A real Redis Cluster of the test's own: six `redis-server --cluster-enabled yes` on free ports in
// a temp folder, made into three primaries with one replica each by `redis-cli --cluster create`.
// A short cluster-node-timeout (2 s) keeps a failover within seconds. Every process and the folder are
// removed after the file.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { hasExited, killProcess, onCleanup, startRedisOnFreePort, waitFor } from '../queue/helpers.ts';

const run = promisify(execFile);

export interface ClusterNode {
  port: number;
  /** The node's id in CLUSTER NODES. */
  id: string;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
}

export interface RedisClusterServers {
  nodes: ClusterNode[];
  /** `host:port` of every node, comma-separated (what REDIS_CLUSTER_NODES takes). */
  seeds: string;
  password: string;
  /** The node serving `slot` as primary now, asked of a live node. */
  primaryOf(slot: number): Promise<ClusterNode>;
  /** CLUSTER NODES as a live node sees it, for a message. */
  describe(): Promise<string>;
  /** The hash slot of a key, as the cluster computes it. */
  keySlot(key: string): Promise<number>;
  /** Waits until every slot is served and the cluster says ok, asked of a live node. */
  healthy(timeoutMs?: number): Promise<void>;
}

/**
 * One node on a free port. A cluster node also binds its bus port (the port + 10000), which freePort
 * did not check and something else may hold (seen once in CI: the node exited, and the wait for it
 * timed out): startRedisOnFreePort starts a node that exits before it is ready again on another port.
 */
function startNode(dir: string, password: string): Promise<{ port: number; child: ChildProcess }> {
  return startRedisOnFreePort((port) => [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    `nodes-${port}.conf`,
    // A replica may always take over (validity factor 0): on a loaded machine its link to the
    // primary can look stale for longer than the node timeout allows by default.
    '--cluster-node-timeout',
    '2000',
    '--cluster-replica-validity-factor',
    '0',
    '--dir',
    dir,
    '--requirepass',
    password,
    '--masterauth',
    password,
  ]);
}

/** CLUSTER NODES of a live node: per node its id, port, flags and the slot ranges it serves. */
async function clusterNodes(ports: number[], alive: (port: number) => boolean, password: string) {
  const port = ports.find(alive);
  if (port === undefined) throw new Error('no live cluster node');
  const client = new Redis({ port, host: '127.0.0.1', password, maxRetriesPerRequest: 1, lazyConnect: true });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const text = (await client.cluster('NODES')) as string;
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const [id, address, flags, , , , , , ...slots] = line.split(' ');
        return { id: id!, port: Number(/:(\d+)@/.exec(address!)?.[1]), flags: flags!.split(','), slots };
      });
  } finally {
    client.disconnect();
  }
}

function serves(ranges: string[], slot: number): boolean {
  return ranges.some((r) => {
    const [from, to] = r.split('-').map(Number);
    return slot >= from! && slot <= (to ?? from)!;
  });
}

export async function startRedisCluster(): Promise<RedisClusterServers> {
  const dir = mkdtempSync(join(tmpdir(), 'refsync-faults-cluster-'));
  onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  const password = `cluster-${process.pid}-${Math.random().toString(16).slice(2)}`;
  const started = await Promise.all(Array.from({ length: 6 }, () => startNode(dir, password)));
  const ports = started.map((s) => s.port);
  const addresses = ports.map((p) => `127.0.0.1:${p}`);
  await run('redis-cli', ['-a', password, '--no-auth-warning', '--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], {
    timeout: 60_000,
  });
  const alive = (port: number) => {
    return !hasExited(started.find((s) => s.port === port)!.child);
  };
  const known = await clusterNodes(ports, alive, password);
  const nodes: ClusterNode[] = started.map(({ port, child }) => ({
    port,
    id: known.find((n) => n.port === port)!.id,
    kill: () => killProcess(child),
  }));
  const cluster: RedisClusterServers = {
    nodes,
    seeds: addresses.join(','),
    password,
    async primaryOf(slot) {
      const view = await clusterNodes(ports, alive, password);
      const primary = view.find((n) => n.flags.includes('master') && !n.flags.includes('fail') && serves(n.slots, slot));
      if (!primary) throw new Error(`no primary serves slot ${slot}`);
      return nodes.find((n) => n.id === primary.id)!;
    },
    async describe() {
      const view = await clusterNodes(ports, alive, password);
      return view.map((n) => `${n.port} ${n.flags.join(',')} ${n.slots.join(' ')}`).join('; ');
    },
    async keySlot(key) {
      const client = new Redis({ port: ports.find(alive)!, host: '127.0.0.1', password, maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
      try {
        return Number(await client.cluster('KEYSLOT', key));
      } finally {
        client.disconnect();
      }
    },
    async healthy(timeoutMs = 60_000) {
      await waitFor(
        async () => {
          for (const port of ports.filter(alive)) {
            const client = new Redis({ port, host: '127.0.0.1', password, maxRetriesPerRequest: 1, lazyConnect: true });
            client.on('error', () => undefined);
            try {
              await client.connect();
              if (!/cluster_state:ok/.test((await client.cluster('INFO')) as string)) return false;
            } catch {
              return false;
            } finally {
              client.disconnect();
            }
          }
          return true;
        },
        'the cluster to be ok on every live node',
        timeoutMs,
        200,
      );
    },
  };
  await cluster.healthy();
  return cluster;
}
