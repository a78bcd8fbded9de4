// REFSYNC_EMBEDDED_WAIT_SECONDS, read by every command that opens the embedded database (beside
// REFSYNC_DB_MAX_CONNECTIONS in db-connections.ts, read the same way).
import { ConfigError } from './errors.ts';

/**
 * REFSYNC_EMBEDDED_WAIT_SECONDS: how long a command waits for another that holds the embedded
 * database (src/db/embedded-lock.ts) before it gives up; unset waits as long as it takes, 0 refuses at once.
 */
export function embeddedWaitMsFromEnv(env: Record<string, string | undefined> = process.env): number | undefined {
  const value = env.REFSYNC_EMBEDDED_WAIT_SECONDS;
  if (value === undefined || value.trim() === '') return undefined;
  if (!/^\s*\d{1,7}\s*$/.test(value)) throw new ConfigError(`REFSYNC_EMBEDDED_WAIT_SECONDS: expected a whole number of seconds, got '${value}'`);
  return Number(value) * 1000;
}
