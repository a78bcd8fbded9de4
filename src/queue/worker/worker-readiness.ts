import type { Worker } from 'bullmq';
import type { Database } from '../../db/database.ts';
import { databaseProbeFailure } from '../../db/refused.ts';
import type { ReadyReport } from '../../server/http.ts';
import { errorLine } from '../../util/error-line.ts';
import { within } from '../../util/time-limit.ts';
import { describeRedis, type RedisClient, type RedisReach } from '../redis/connection.ts';

/** The parts of a worker that readiness looks at; undefined while they are still starting. */
export interface ReadinessSubjects {
  db: Database;
  redisUrl: string;
  reach: RedisReach;
  redis(): RedisClient | undefined;
  worker(): Worker | undefined;
  stopping(): boolean;
}

/** The state of the worker's blocking connection (the one BullMQ waits for jobs on). */
export async function blockingStatus(worker: Worker): Promise<string> {
  const client = worker.backend.blockingClient;
  return client ? ((await within(client, 1_000, 'blocking client')).status ?? 'unknown') : 'none';
}

/** /readyz: ready when Postgres and Redis answer and the worker is taking jobs; each check says why not. */
export function workerReadiness(subjects: ReadinessSubjects): () => Promise<ReadyReport> {
  const probes: Record<string, () => Promise<string>> = {
    // A connection of the pool (counted in the budget), one probe at a time for every caller
    // (Database#probe). /readyz answers anyone: the failure in refsync's words, not the server's.
    postgres: async () => {
      try {
        await within(subjects.db.probe(), 2_000, 'a connection');
        return 'ok';
      } catch (err) {
        return databaseProbeFailure(err);
      }
    },
    redis: async () => {
      const redis = subjects.redis();
      if (!redis) return 'starting';
      await within(redis.ping(), 2_000, `ping ${describeRedis(subjects.redisUrl, subjects.reach)}`);
      return 'ok';
    },
    worker: async () => {
      const worker = subjects.worker();
      if (subjects.stopping()) return 'stopping';
      if (!worker) return 'starting';
      if (!worker.isRunning()) return 'not running';
      const status = await blockingStatus(worker);
      return status === 'ready' ? 'ok' : `blocking connection ${status}`;
    },
  };
  return async () => {
    const checks: Record<string, string> = {};
    await Promise.all(
      Object.entries(probes).map(async ([name, probe]) => {
        try {
          checks[name] = await probe();
        } catch (err) {
          checks[name] = errorLine(err);
        }
      }),
    );
    return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
  };
}
