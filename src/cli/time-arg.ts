import { UsageError } from './args.ts';

/** An ISO-8601 date or time option (`--since`, `--at`); null when not given. */
export function parseTimeArg(command: string, option: string, value: string | undefined): Date | null {
  if (value === undefined) return null;
  const looksIso = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value);
  const date = new Date(value);
  if (!looksIso || Number.isNaN(date.getTime())) {
    throw new UsageError(`${command}: ${option} '${value}' is not an ISO-8601 date or time (e.g. 2026-11-01 or 2026-11-01T12:00:00Z)`);
  }
  return date;
}
