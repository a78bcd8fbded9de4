import { catalog } from '../catalog/catalog.ts';
import { listFunctionNames } from '../columns/list-functions.ts';
import { migrateListViews } from '../columns/migrate-views.ts';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Database } from './database.ts';
import { grantToReader, namesReaderRole, readerRoleState } from './reader-role.ts';
import { checkSchema, migrationsFolder, SchemaMismatchError } from './schema-version.ts';

// Any fixed number: it only has to be the same in every refsync process.
const MIGRATION_LOCK = 7_302_611;

/**
 * Applies the committed migrations, in drizzle's own bookkeeping (drizzle.__drizzle_migrations:
 * the file's sha-256 and the journal's `when`), so databases migrated by either stay compatible.
 * Idempotent, and safe from two processes at once: everything runs in one transaction under a
 * transaction-scoped advisory lock, so the second finds nothing to do. Being one transaction, it
 * also works through a transaction-mode pooler, where a session lock would not hold. Then the
 * per-list views are brought to their recorded typed columns (generated in TypeScript, so their SQL
 * lives in one place), each list in a transaction of its own. A database a newer refsync migrated
 * is refused before anything is written (a SchemaMismatchError): this code cannot know its schema.
 * An owner that may not create roles migrates without refdata_reader (reader-role.ts): its
 * statements are skipped and `readerMissing` is true; once the role exists, every migrate grants
 * to it again.
 */
export async function migrateDatabase(db: Database): Promise<{ readerMissing: boolean }> {
  const migrations = readMigrationFiles({ migrationsFolder });
  await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const check = await checkSchema(tx);
    if (check.state === 'ahead') throw new SchemaMismatchError(check);
    const state = await readerRoleState(tx);
    await tx.query('create schema if not exists drizzle');
    await tx.query('create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)');
    const { rows } = await tx.query<{ created_at: string }>('select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1');
    const last = rows[0] ? Number(rows[0].created_at) : undefined;
    for (const migration of migrations) {
      if (last !== undefined && last >= migration.folderMillis) continue;
      for (const statement of migration.sql) if (state !== 'absent' || !namesReaderRole(statement)) await tx.query(statement);
      await tx.query('insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)', [migration.hash, migration.folderMillis]);
    }
  });
  await migrateListViews(db);
  // The migrations' own grants to the role, bar its creation, and the lists' generated functions.
  const grants = migrations.flatMap((m) => m.sql).filter((statement) => namesReaderRole(statement) && !/\bcreate role\b/i.test(statement));
  const readerMissing = await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    return !(await grantToReader(
      tx,
      grants,
      catalog.flatMap(({ key }) => listFunctionNames(key)),
    ));
  });
  return { readerMissing };
}
