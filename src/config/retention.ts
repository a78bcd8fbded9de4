import { ConfigError } from './errors.ts';

/** How long what only grows is kept, in days; 0 keeps it forever. */
export interface RetentionConfig {
  /** Unchanged ok snapshots (a fetch that found the list as it was); the last per target is always kept. */
  snapshotsDays: number;
  /** Alerts delivered, or skipped for want of a channel; dead and disabled ones stay for a human. */
  alertsDays: number;
  /** Finished sync runs no snapshot or alert refers to any more; the last per source is always kept. */
  runsDays: number;
}

const settings = {
  snapshotsDays: ['REFSYNC_RETAIN_SNAPSHOTS_DAYS', 30],
  alertsDays: ['REFSYNC_RETAIN_ALERTS_DAYS', 90],
  runsDays: ['REFSYNC_RETAIN_RUNS_DAYS', 90],
} as const;

/** The retention settings alone: `refsync prune` needs them and DATABASE_URL, not the upstream's. */
export function retentionFromEnv(env: Record<string, string | undefined>): RetentionConfig {
  const read = ([name, fallback]: readonly [string, number]): number => {
    const value = env[name];
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0 || n > 36_500) {
      throw new ConfigError(`${name}: expected a whole number of days from 0 (keep forever) to 36500, got '${value.slice(0, 40)}'`);
    }
    return n;
  };
  return { snapshotsDays: read(settings.snapshotsDays), alertsDays: read(settings.alertsDays), runsDays: read(settings.runsDays) };
}
