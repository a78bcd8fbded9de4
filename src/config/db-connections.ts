// REFSYNC_DB_MAX_CONNECTIONS, read by every command: the worker and `refsync sync` through
// loadConfig, the reading commands (status, changes, ...) that need no upstream settings directly.
import { z } from 'zod';
import { ConfigError } from './errors.ts';

/** At least 2: a sync holds one for its run's claim and writes its lists on another. */
const dbMaxConnectionsSchema = z.coerce.number().int().min(2).max(10_000);

/** The setting as given, or undefined (unset or empty) for each command's default. */
export function dbMaxConnectionsFromEnv(env: Record<string, string | undefined> = process.env): number | undefined {
  const value = env.REFSYNC_DB_MAX_CONNECTIONS;
  if (value === undefined || value.trim() === '') return undefined;
  const parsed = dbMaxConnectionsSchema.safeParse(value);
  if (!parsed.success) throw new ConfigError(`REFSYNC_DB_MAX_CONNECTIONS: expected a whole number from 2 to 10000, got '${value}'`);
  return parsed.data;
}
