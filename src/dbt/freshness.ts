// dbt source freshness thresholds derived from the sync schedule: a list is expected to be synced
// once per scheduled gap, so it warns when one scheduled run was missed and errors after three.
import { CronExpressionParser } from 'cron-parser';

export interface FreshnessAfter {
  count: number;
  period: 'minute' | 'hour' | 'day';
}

export interface FreshnessThresholds {
  warn_after: FreshnessAfter;
  error_after: FreshnessAfter;
}

/** Missed runs tolerated: one late run warns, three error. */
const WARN_GAPS = 2;
const ERROR_GAPS = 4;
/** A fixed week to read the schedule over, so the exported file is the same on every run. */
const FROM = new Date('2026-01-05T00:00:00Z');
const OCCURRENCES = 2_000;

/** The longest time between two consecutive runs of the schedule, in whole minutes (at least 1). */
export function longestGapMinutes(schedule: string, timezone: string): number {
  const it = CronExpressionParser.parse(schedule, { tz: timezone, currentDate: FROM });
  let previous = it.next().getTime();
  let longest = 0;
  for (let i = 0; i < OCCURRENCES; i++) {
    const next = it.next().getTime();
    longest = Math.max(longest, next - previous);
    previous = next;
  }
  return Math.max(1, Math.ceil(longest / 60_000));
}

/** Minutes in dbt's words: whole days or hours when they divide evenly, else minutes. */
function after(minutes: number): FreshnessAfter {
  if (minutes % 1440 === 0) return { count: minutes / 1440, period: 'day' };
  if (minutes % 60 === 0) return { count: minutes / 60, period: 'hour' };
  return { count: minutes, period: 'minute' };
}

export function freshnessFor(schedule: string, timezone: string): FreshnessThresholds {
  const gap = longestGapMinutes(schedule, timezone);
  return { warn_after: after(WARN_GAPS * gap), error_after: after(ERROR_GAPS * gap) };
}
