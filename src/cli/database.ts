import { existsSync } from 'node:fs';
import { ConfigError } from '../config/errors.ts';
import { readSecret } from '../config/secrets.ts';
import { capabilitiesOf, EMBEDDED_DATA_DIR, openDatabase, type Database } from '../db/database.ts';
import { connectFailure } from '../db/refused.ts';
import { EmbeddedDatabaseBusyError } from '../db/embedded-lock.ts';
import { connectionBudget } from '../db/connection-budget.ts';
import { dbMaxConnectionsFromEnv } from '../config/db-connections.ts';
import { embeddedWaitMsFromEnv } from '../config/embedded-wait.ts';
import { migrateDatabase } from '../columns/migrate-views.ts';
import { checkSchema, SchemaMismatchError } from '../db/schema-version.ts';
import type { Logger } from '../util/logger.ts';
import { schemaPresent } from '../db/migrations-sql.ts';
import { followRestore } from '../db/feed-epoch.ts';

export interface CliDatabaseOptions {
  databaseUrl?: string | undefined;
  logger?: Logger;
  /**
   * Bring the embedded database to this refsync's schema whatever it holds (`refsync demo`: it is
   * the demo's own). Otherwise only a new embedded database is migrated (the first `refsync sync`
   * creates it); one an older refsync left behind waits for `refsync migrate`, as a server does.
   */
  migrateEmbedded?: boolean;
  dataDir?: string;
  /** Only reads: without DATABASE_URL, the embedded database must already exist (never created empty). */
  readOnly?: boolean;
  /** The pool's size (connection-budget.ts); default REFSYNC_DB_MAX_CONNECTIONS, else 2. */
  poolSize?: number;
}

async function schemaExists(db: Database): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>(schemaPresent);
  return rows[0]?.ok === true;
}

/**
 * The handshake of docs/production.md ("Upgrading"): a database a newer refsync migrated, or one
 * behind this refsync, is refused before anything is read or written. Reading commands too: their
 * queries name columns of the later migrations, and "run refsync migrate" beats an SQL error.
 * A database never migrated (or whose schema was dropped) keeps its own message.
 */
async function assertUsableSchema(db: Database): Promise<void> {
  const check = await checkSchema(db);
  if (check.database === 0 || !(await schemaExists(db))) throw new ConfigError('DATABASE_URL: schema refdata is missing; run `refsync migrate` first');
  if (check.state !== 'current') throw new SchemaMismatchError(check);
}

/** Opens DATABASE_URL, or the embedded PGlite database, for a command. */
export async function openCliDatabase(options: CliDatabaseOptions): Promise<Database> {
  const openOptions: Parameters<typeof openDatabase>[0] = {
    applicationName: 'refsync-cli',
    poolSize: options.poolSize ?? connectionBudget('other', dbMaxConnectionsFromEnv(), 0),
  };
  if (options.databaseUrl) openOptions.url = options.databaseUrl;
  else {
    openOptions.dataDir = options.dataDir ?? EMBEDDED_DATA_DIR;
    openOptions.embeddedLock = { waitMs: embeddedWaitMsFromEnv() };
  }
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
    if (err instanceof EmbeddedDatabaseBusyError) throw err;
    throw connectFailure(err, 'cannot reach the database');
  }
  try {
    const embedded = capabilitiesOf(db).embedded;
    if (embedded && (options.migrateEmbedded || (!options.readOnly && (await checkSchema(db)).database === 0))) {
      // Migrating records a restore of the database as a new change feed epoch itself (migrateSchema).
      await migrateDatabase(db);
    } else {
      await assertUsableSchema(db);
      // A command that writes records a restore of the database as a new change feed epoch first.
      if (!options.readOnly) await followRestore(db);
    }
  } catch (err) {
    await db.close();
    throw err;
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
