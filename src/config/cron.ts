import { CronExpressionParser } from 'cron-parser';

/**
 * Why BullMQ's own cron parser (cron-parser, the version BullMQ depends on) would refuse a schedule
 * in its time zone, or undefined when it accepts it. Checked at start so a bad REFSYNC_SCHEDULE is a
 * configuration error naming the setting, not a worker that dies later at its first repeat.
 */
export function cronProblem(expression: string, timezone: string): string | undefined {
  try {
    CronExpressionParser.parse(expression, { tz: timezone });
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}
