// How many Postgres connections one refsync process may hold at once (REFSYNC_DB_MAX_CONNECTIONS,
// docs/production.md "Managed Postgres"), and how each kind of process spends them. A managed
// Postgres has 25 to 100 slots shared with other applications: an operator adds up the budgets of
// the processes they run and compares the total with max_connections minus the reserved slots.
import { ConfigError } from '../config/errors.ts';

/** sync and demo: a run's claim plus its lists; worker: its jobs, the rest, and LISTEN; other commands: a few reads. */
export type BudgetedProcess = 'sync' | 'worker' | 'other';

/** The contract's defaults when REFSYNC_DB_MAX_CONNECTIONS is unset. */
export function connectionBudget(process: BudgetedProcess, setting: number | undefined, concurrency: number): number {
  if (setting !== undefined) return setting;
  if (process === 'sync') return concurrency + 1;
  if (process === 'worker') return concurrency + 2;
  return 2;
}

/**
 * `refsync sync` and `demo`: the pool is the whole budget (no LISTEN), one connection of it held by
 * the run's claim, so the lists synced at once are at most the rest: a smaller budget syncs fewer
 * lists at once rather than making them wait for the pool.
 */
export function syncPool(setting: number | undefined, concurrency: number): { poolSize: number; concurrency: number } {
  const poolSize = connectionBudget('sync', setting, concurrency);
  return { poolSize, concurrency: Math.max(1, Math.min(concurrency, poolSize - 1)) };
}

/**
 * The worker's pool: the budget less its LISTEN connection. Its jobs take one each at most, and at
 * least one more is left for the health checks, sweeps, gauges and alerts; a budget that leaves
 * fewer is refused at start (exit 2), naming both settings.
 */
export function workerPoolSize(setting: number | undefined, concurrency: number, listens: boolean): number {
  const budget = connectionBudget('worker', setting, concurrency);
  const pool = budget - (listens ? 1 : 0);
  if (pool < concurrency + 1) {
    throw new ConfigError(
      `REFSYNC_DB_MAX_CONNECTIONS: ${budget} is too few for a worker with REFSYNC_CONCURRENCY=${concurrency}: it needs ${concurrency + 1 + (listens ? 1 : 0)} (one per job, one for its checks and alerts${listens ? ', one for LISTEN' : ''}); raise it or lower REFSYNC_CONCURRENCY`,
    );
  }
  return pool;
}
