import { ConfigError } from '../../config/errors.ts';
import { openDatabase, type Database } from '../../db/database.ts';
import { assertSchemaCurrent } from '../../db/schema-version.ts';
import { connectFailure } from '../../db/refused.ts';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';
import { within } from '../../util/time-limit.ts';
import type { ResourceStack } from './resource-stack.ts';
import { runsReadable } from '../../sync/sql.ts';

/**
 * The worker's pool (one connection per job slot and one more for the health checks, the sweeps, the
 * gauges and the alerts: src/db/connection-budget.ts), checked at once so a missing migration, a database migrated by a newer refsync or an unreachable
 * server stops the start with a clear message rather than failing every job.
 */
export async function openWorkerDatabase(url: string, poolSize: number, logger: Logger, resources: ResourceStack): Promise<Database> {
  const db = await openDatabase({ url, poolSize, logger, applicationName: 'refsync-worker' });
  resources.push('postgres', () => db.close());
  try {
    // Past the pool's wait for a refused connection (10 s), so that a full server is named as such.
    await within(db.query(runsReadable), 15_000, 'Postgres');
  } catch (err) {
    if (/refdata|does not exist/.test(errorLine(err))) throw new ConfigError('DATABASE_URL: the refdata schema is missing; run `refsync migrate` first');
    throw connectFailure(err, 'Postgres is not reachable');
  }
  await assertSchemaCurrent(db);
  return db;
}
