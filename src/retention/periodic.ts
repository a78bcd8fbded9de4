import type { RetentionConfig } from '../config/retention.ts';
import type { Queryable } from '../db/database.ts';
import type { Logger } from '../util/logger.ts';
import { prune, type PruneCounts } from './prune.ts';

/** Each kind retention deletes: its table, what goes, and the setting that keeps it longer. */
const kinds: Array<{ kind: keyof PruneCounts; table: string; what: string; setting: string; days: keyof RetentionConfig }> = [
  { kind: 'snapshots', table: 'refdata.snapshots', what: 'unchanged snapshots', setting: 'REFSYNC_RETAIN_SNAPSHOTS_DAYS', days: 'snapshotsDays' },
  { kind: 'alerts', table: 'refdata.alerts', what: 'delivered or skipped alerts', setting: 'REFSYNC_RETAIN_ALERTS_DAYS', days: 'alertsDays' },
  { kind: 'runs', table: 'refdata.sync_runs', what: 'finished runs nothing refers to', setting: 'REFSYNC_RETAIN_RUNS_DAYS', days: 'runsDays' },
];

/**
 * Retention is on by default (since 0.2.0): an install upgraded from 0.1.0 starts losing old rows
 * it used to keep. So the first time this process deletes from a table, one line says what goes,
 * after how long, and which setting keeps it (0: forever); later passes log only their counts.
 */
function announceFirstPrunes(counts: PruneCounts, retention: RetentionConfig, announced: Set<string>, logger: Logger): void {
  for (const k of kinds) {
    if (counts[k.kind] === 0 || announced.has(k.table)) continue;
    announced.add(k.table);
    const days = retention[k.days];
    logger.info(
      { table: k.table, deleted: counts[k.kind], olderThanDays: days, setting: k.setting },
      `retention: first prune of ${k.table} by this worker: ${k.what} older than ${days} days are deleted (${k.setting}; 0 keeps them forever)`,
    );
  }
}

/**
 * The worker's retention: prune every `intervalMs` (the first time one interval after start, so a
 * restart loop does not prune in a loop). One pass at a time; a failed pass is logged and retried
 * at the next interval.
 */
export function startPeriodicPrune(db: Queryable, retention: RetentionConfig, logger: Logger, intervalMs: number): { close(): Promise<void> } {
  let running: Promise<void> | undefined;
  const announced = new Set<string>();
  const timer = setInterval(() => {
    if (running) return;
    const started = performance.now();
    running = prune(db, retention)
      .then(
        (counts) => {
          announceFirstPrunes(counts, retention, announced, logger);
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
