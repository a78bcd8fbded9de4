// Databases at a schema version other than this refsync's: behind (only the first migrations
// applied, with drizzle's bookkeeping, as an older refsync left them) or ahead (a migration row
// this refsync does not ship, as a newer refsync leaves behind).
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Queryable } from '../../src/db/database.ts';
import { migrationsFolder } from '../../src/db/schema-version.ts';

/** Applies the first `count` shipped migrations to an empty database, as `refsync migrate` of that release did. */
export async function migrateUpTo(db: Queryable, count: number): Promise<void> {
  await db.query('create schema drizzle');
  await db.query('create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)');
  for (const migration of readMigrationFiles({ migrationsFolder }).slice(0, count)) {
    for (const statement of migration.sql) await db.query(statement);
    await db.query('insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)', [migration.hash, migration.folderMillis]);
  }
}

/** Records a migration later than every shipped one, as a newer refsync's `migrate` would. */
export async function recordNewerMigration(db: Queryable): Promise<void> {
  await db.query(
    "insert into drizzle.__drizzle_migrations (hash, created_at) select 'h30-newer-release', max(created_at) + 1000 from drizzle.__drizzle_migrations",
  );
}

/** What a command could have written: row counts of the tables and the relations of schema refdata. */
export async function schemaFootprint(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<Record<string, number>>(`select
    (select count(*)::int from drizzle.__drizzle_migrations) as migrations,
    (select count(*)::int from pg_class where relnamespace = 'refdata'::regnamespace) as relations,
    (select count(*)::int from refdata.sync_runs) as runs,
    (select count(*)::int from refdata.snapshots) as snapshots,
    (select count(*)::int from refdata.entries) as entries,
    (select count(*)::int from refdata.entry_changes) as changes,
    (select count(*)::int from refdata.alerts) as alerts`);
  return rows[0]!;
}
