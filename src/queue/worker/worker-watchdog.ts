import type { RedisClient } from '../redis/connection.ts';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';
import { within } from '../../util/time-limit.ts';
import type { JobWorker } from './job-worker.ts';
import { blockingStatus } from './worker-readiness.ts';

export interface WatchdogOptions {
  commands: RedisClient;
  jobs: JobWorker;
  /** Puts missing schedulers back; run on each check while Redis answers. */
  restoreSchedulers: () => Promise<void>;
  intervalMs: number;
  /** How long the worker may be unhealthy while Redis answers before it is replaced. */
  recreateAfterMs: number;
  logger: Logger;
  stopping: () => boolean;
}

/**
 * When Redis answers but the worker's blocking connection has stayed down (or the worker stopped
 * running) for recreateAfterMs, replaces the worker. BullMQ's own reconnect usually suffices; this
 * covers the cases where it has been known not to. One check at a time; none once stopping.
 */
export function startWatchdog(options: WatchdogOptions): { close(): Promise<void> } {
  const { commands, jobs, logger, stopping } = options;
  let unhealthySince: number | undefined;
  let checking = false;

  async function check(): Promise<void> {
    const redisUp = await within(commands.ping(), 2_000, 'ping').then(
      () => true,
      () => false,
    );
    // A Redis flushed, restarted without persistence or failed over to an empty replica has
    // lost the schedulers: put them back, or scheduled syncs would stop silently.
    if (redisUp && !stopping()) await options.restoreSchedulers();
    const worker = jobs.current;
    const status = await blockingStatus(worker).catch(() => 'unknown');
    const healthy = !redisUp || (status === 'ready' && worker.isRunning());
    if (healthy) {
      unhealthySince = undefined;
      return;
    }
    unhealthySince ??= Date.now();
    if (Date.now() - unhealthySince < options.recreateAfterMs || stopping()) return;
    logger.warn({ blocking: status, running: worker.isRunning() }, 'worker is not taking jobs although Redis answers: recreating it');
    jobs.replace();
    unhealthySince = undefined;
  }

  const timer = setInterval(() => {
    if (checking || stopping()) return;
    checking = true;
    check()
      .catch((err) => logger.warn({ err: errorLine(err) }, 'worker health check failed'))
      .finally(() => {
        checking = false;
      });
  }, options.intervalMs);
  timer.unref();
  return { close: async () => clearInterval(timer) };
}
