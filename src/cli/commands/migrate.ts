import { EMBEDDED_DATA_DIR, openDatabase, type Database } from '../../db/database.ts';
import { migrateDatabase } from '../../columns/migrate-views.ts';
import { CREATE_READER_STATEMENT, READER_ROLE } from '../../db/reader-role.ts';
import { connectFailure } from '../../db/refused.ts';
import { connectionBudget } from '../../db/connection-budget.ts';
import { dbMaxConnectionsFromEnv } from '../../config/db-connections.ts';
import { parseCommandArgs } from '../args.ts';
import { databaseUrlFromEnv } from '../database.ts';
import { embeddedWaitMsFromEnv } from '../../config/embedded-wait.ts';
import { appliedMigrationCount } from '../../db/migrations-sql.ts';

export async function run(argv: string[]): Promise<number> {
  parseCommandArgs('migrate', argv);
  const url = databaseUrlFromEnv();
  const db = url
    ? await openDatabase({ url, poolSize: connectionBudget('other', dbMaxConnectionsFromEnv(), 0), applicationName: 'refsync-migrate' })
    : await openDatabase({ dataDir: EMBEDDED_DATA_DIR, embeddedLock: { waitMs: embeddedWaitMsFromEnv() } });
  try {
    if (url) await reach(db);
    const { readerMissing } = await migrateDatabase(db);
    const { rows } = await db.query<{ n: number }>(appliedMigrationCount);
    process.stdout.write(`migrations applied: ${rows[0]?.n ?? 0} (${url ? new URL(url).host + new URL(url).pathname : EMBEDDED_DATA_DIR})\n`);
    if (readerMissing) {
      process.stdout.write(
        `${READER_ROLE}: not created, this role may not create roles; an administrator runs \`${CREATE_READER_STATEMENT}\`, and the next refsync migrate grants it read access\n`,
      );
    }
    return 0;
  } finally {
    await db.close();
  }
}

async function reach(db: Database): Promise<void> {
  try {
    await db.query('select 1');
  } catch (err) {
    throw connectFailure(err, 'cannot reach the database');
  }
}
