import { readMigrationFiles } from 'drizzle-orm/migrator';
import { errorCodeDescription } from '../util/error-codes.ts';
import type { Database, Queryable } from './database.ts';
import { followRestore } from './feed-epoch.ts';
import { grantToReader, namesReaderRole, readerRoleState } from './reader-role.ts';
import { checkSchema, migrationsFolder, SchemaMismatchError } from './schema-version.ts';
import { createJournalSchema, createJournal, lastAppliedMigration, recordMigration, errorCodeComment, commentErrorCodes } from './migrations-sql.ts';

// Any fixed number: it only has to be the same in every refsync process.
const MIGRATION_LOCK = 7_302_611;

/**
 * Applies the committed migrations, in drizzle's own bookkeeping (drizzle.__drizzle_migrations:
 * the file's sha-256 and the journal's `when`), so databases migrated by either stay compatible.
 * Idempotent, and safe from two processes at once: everything runs in one transaction under a
 * transaction-scoped advisory lock, so the second finds nothing to do. Being one transaction, it
 * also works through a transaction-mode pooler, where a session lock would not hold. A database a
 * newer refsync migrated is refused before anything is written (a SchemaMismatchError): this code
 * cannot know its schema. An owner that may not create roles migrates without refdata_reader
 * (reader-role.ts): the statements naming it are skipped, and grantMigrationsToReader grants them
 * once it exists. The per-list views come after, one layer up
 * (src/columns/migrate-views.ts#migrateDatabase).
 */
export async function migrateSchema(db: Database): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder });
  await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const check = await checkSchema(tx);
    if (check.state === 'ahead') throw new SchemaMismatchError(check);
    const state = await readerRoleState(tx);
    await tx.query(createJournalSchema);
    await tx.query(createJournal);
    const { rows } = await tx.query<{ created_at: string }>(lastAppliedMigration);
    const last = rows[0] ? Number(rows[0].created_at) : undefined;
    for (const migration of migrations) {
      if (last !== undefined && last >= migration.folderMillis) continue;
      for (const statement of migration.sql) if (state !== 'absent' || !namesReaderRole(statement)) await tx.query(statement);
      await tx.query(recordMigration, [migration.hash, migration.folderMillis]);
    }
    // A database restored since it was last migrated starts a new change feed epoch here.
    await followRestore(tx);
    await describeErrorCodes(tx);
  });
}

/**
 * The migrations' own grants to refdata_reader (bar its creation), and EXECUTE on `functions` (the
 * lists' generated ones, named by the layer that makes them), once the role exists: false when it
 * does not yet (an owner that may not create roles; reader-role.ts says what an administrator runs).
 */
export async function grantMigrationsToReader(db: Database, functions: string[]): Promise<boolean> {
  const grants = readMigrationFiles({ migrationsFolder })
    .flatMap((m) => m.sql)
    .filter((statement) => namesReaderRole(statement) && !/\bcreate role\b/i.test(statement));
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    return grantToReader(tx, grants, functions);
  });
}

/**
 * refdata.snapshots.error_code's comment lists every code of src/util/error-codes.ts, as dbt's
 * description of it does: written from the vocabulary rather than by a migration, so a new code
 * cannot leave it behind. Only written when it differs, so a migrate with nothing to do writes nothing.
 */
async function describeErrorCodes(q: Queryable): Promise<void> {
  const description = errorCodeDescription();
  const { rows } = await q.query<{ description: string | null }>(errorCodeComment);
  if (rows[0]?.description === description) return;
  await q.query(commentErrorCodes(description));
}
