import type { RetentionConfig } from '../config/retention.ts';
import type { Queryable } from '../db/database.ts';
import type { Logger } from '../util/logger.ts';
import { prune } from './prune.ts';

/**
 * The worker's retention: prune every `intervalMs` (the first time one interval after start, so a
 * restart loop does not prune in a loop). One pass at a time; a failed pass is logged and retried
 * at the next interval.
 */
export function startPeriodicPrune(db: Queryable, retention: RetentionConfig, logger: Logger, intervalMs: number): { close(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    const started = performance.now();
    running = prune(db, retention)
      .then(
        (counts) => {
          if (counts.snapshots + counts.alerts + counts.runs > 0) {
            logger.info({ deleted: counts, ms: Math.round(performance.now() - started) }, 'retention: old rows deleted');
          }
        },
        (err: unknown) => logger.warn({ err: (err as Error).message.split('\n')[0] }, 'retention pass failed; retried at the next interval'),
      )
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await running;
    },
  };
}
