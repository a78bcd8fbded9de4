import { ConfigError } from '../../config/errors.ts';
import { openDatabase, type Database } from '../../db/database.ts';
import { assertSchemaCurrent } from '../../db/schema-version.ts';
import { describeConnectError } from '../../db/tls.ts';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';
import { within } from '../../util/time-limit.ts';
import type { ResourceStack } from './resource-stack.ts';

/**
 * The worker's pool (its job slots plus a few for the health checks, the sweeps and the alerts),
 * checked at once so a missing migration, a database migrated by a newer refsync or an unreachable
 * server stops the start with a clear message rather than failing every job.
 */
export async function openWorkerDatabase(url: string, concurrency: number, logger: Logger, resources: ResourceStack): Promise<Database> {
  const db = await openDatabase({ url, poolSize: concurrency + 4, logger, applicationName: 'refsync-worker' });
  resources.push('postgres', () => db.close());
  try {
    await within(db.query('select 1 from refdata.sync_runs limit 0'), 10_000, 'Postgres');
  } catch (err) {
    if (/refdata|does not exist/.test(errorLine(err))) throw new ConfigError('DATABASE_URL: the refdata schema is missing; run `refsync migrate` first');
    throw new Error(`Postgres is not reachable: ${describeConnectError(err)}`);
  }
  await assertSchemaCurrent(db);
  return db;
}
