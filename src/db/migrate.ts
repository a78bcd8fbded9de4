import { fileURLToPath } from 'node:url';
import { migrateListViews } from '../columns/migrate-views.ts';
import { capabilitiesOf } from './capabilities.ts';
import type { Database } from './database.ts';

export const migrationsFolder = fileURLToPath(new URL('../../migrations', import.meta.url));

// Any fixed number: it only has to be the same in every refsync process.
const MIGRATION_LOCK = 7_302_611;
const inProcessLocks = new WeakMap<Database, Promise<unknown>>();

/**
 * Applies the committed migrations, then brings the per-list views to their recorded typed columns
 * (generated in TypeScript, so their SQL lives in one place). Idempotent (drizzle records what ran), and safe from two
 * processes at once: a session advisory lock serialises them, so the second finds nothing to do.
 */
export async function migrateDatabase(db: Database): Promise<void> {
  if (!capabilitiesOf(db).sessionLocks) {
    // One embedded session lives in this process only, so a promise chain is the lock.
    const previous = inProcessLocks.get(db) ?? Promise.resolve();
    const run = previous.then(async () => {
      const { migrate } = await import('drizzle-orm/pglite/migrator');
      await migrate((await db.orm()) as Parameters<typeof migrate>[0], { migrationsFolder });
      await migrateListViews(db);
    });
    inProcessLocks.set(db, run.catch(() => undefined));
    return run;
  }
  await db.withConnection(async (lockConn) => {
    await lockConn.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const { migrate } = await import('drizzle-orm/node-postgres/migrator');
      await migrate((await db.orm()) as Parameters<typeof migrate>[0], { migrationsFolder });
      await migrateListViews(db);
    } finally {
      await lockConn.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  });
}
