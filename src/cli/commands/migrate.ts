import { EMBEDDED_DATA_DIR, openDatabase, type Database } from '../../db/database.ts';
import { migrateDatabase } from '../../columns/migrate-views.ts';
import { describeConnectError } from '../../db/tls.ts';
import { parseCommandArgs } from '../args.ts';
import { databaseUrlFromEnv } from '../database.ts';

export async function run(argv: string[]): Promise<number> {
  parseCommandArgs('migrate', argv);
  const url = databaseUrlFromEnv();
  const db = url ? await openDatabase({ url, poolSize: 2, applicationName: 'refsync-migrate' }) : await openDatabase({ dataDir: EMBEDDED_DATA_DIR });
  try {
    if (url) await reach(db);
    await migrateDatabase(db);
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
    process.stdout.write(`migrations applied: ${rows[0]?.n ?? 0} (${url ? new URL(url).host + new URL(url).pathname : EMBEDDED_DATA_DIR})\n`);
    return 0;
  } finally {
    await db.close();
  }
}

async function reach(db: Database): Promise<void> {
  try {
    await db.query('select 1');
  } catch (err) {
    throw new Error(`cannot reach the database: ${describeConnectError(err)}`);
  }
}
