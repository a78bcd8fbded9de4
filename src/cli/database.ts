import { existsSync } from 'node:fs';
import { ConfigError } from '../config/errors.ts';
import { readSecret } from '../config/secrets.ts';
import { capabilitiesOf } from '../db/capabilities.ts';
import { EMBEDDED_DATA_DIR, openDatabase, type Database } from '../db/database.ts';
import { describeConnectError } from '../db/tls.ts';
import { migrateDatabase } from '../db/migrate.ts';
import type { Logger } from '../util/logger.ts';

export interface CliDatabaseOptions {
  databaseUrl?: string | undefined;
  logger?: Logger;
  /**
   * Apply migrations first. Always done for the embedded database (it is refsync's own); against
   * DATABASE_URL only `refsync migrate` changes the schema, so a missing schema is an error here.
   */
  migrateEmbedded?: boolean;
  dataDir?: string;
  /** Only reads: without DATABASE_URL, the embedded database must already exist (never created empty). */
  readOnly?: boolean;
}

async function schemaExists(db: Database): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>("select to_regclass('refdata.snapshots') is not null as ok");
  return rows[0]?.ok === true;
}

/** Opens DATABASE_URL, or the embedded PGlite database, for a command. */
export async function openCliDatabase(options: CliDatabaseOptions): Promise<Database> {
  const openOptions: Parameters<typeof openDatabase>[0] = { applicationName: 'refsync-cli' };
  if (options.databaseUrl) openOptions.url = options.databaseUrl;
  else openOptions.dataDir = options.dataDir ?? EMBEDDED_DATA_DIR;
  if (options.readOnly && openOptions.dataDir && !existsSync(openOptions.dataDir)) {
    throw new ConfigError(
      `DATABASE_URL: not set, and there is no embedded database in ${openOptions.dataDir} yet; set DATABASE_URL or run refsync sync (or refsync demo) first`,
    );
  }
  if (options.logger) openOptions.logger = options.logger;
  let db: Database;
  try {
    db = await openDatabase(openOptions);
    if (!capabilitiesOf(db).embedded) await db.query('select 1');
  } catch (err) {
    throw new Error(`cannot reach the database: ${describeConnectError(err)}`);
  }
  if (capabilitiesOf(db).embedded && options.migrateEmbedded !== false) {
    await migrateDatabase(db);
  } else if (!(await schemaExists(db))) {
    await db.close();
    throw new ConfigError('DATABASE_URL: schema refdata is missing; run `refsync migrate` first');
  }
  return db;
}

/**
 * DATABASE_URL (or DATABASE_URL_FILE: the URL may carry a password) alone, for commands that only
 * read the tables and need no upstream settings.
 */
export function databaseUrlFromEnv(env: Record<string, string | undefined> = process.env): string | undefined {
  return readSecret('DATABASE_URL', env.DATABASE_URL, env.DATABASE_URL_FILE);
}
