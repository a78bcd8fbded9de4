// The SQL on drizzle's migrations journal (drizzle.__drizzle_migrations, kept as drizzle-kit
// writes it) and the checks that a database is migrated, by name.

/** How many migrations the database has applied. */
export const appliedMigrationCount = 'select count(*)::int as n from drizzle.__drizzle_migrations';

/** Whether the database has been migrated (refdata.snapshots exists). */
export const schemaPresent = "select to_regclass('refdata.snapshots') is not null as ok";

/** Whether drizzle's migrations journal exists. */
export const journalPresent = "select to_regclass('drizzle.__drizzle_migrations') is not null as ok";

/** When each applied migration was made, as the journal records it. */
export const appliedMigrations = 'select created_at from drizzle.__drizzle_migrations';

/** drizzle's schema, for its journal. */
export const createJournalSchema = 'create schema if not exists drizzle';

/** drizzle's migrations journal, as drizzle-kit makes it: one row per applied migration. */
export const createJournal = 'create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)';

/** The `when` of the last migration applied. */
export const lastAppliedMigration = 'select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1';

/** Records a migration applied: the file's sha-256 and the journal's `when`. */
export const recordMigration = 'insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)';

/** refdata.snapshots.error_code's comment as it is. */
export const errorCodeComment =
  "select col_description('refdata.snapshots'::regclass, attnum) as description from pg_attribute where attrelid = 'refdata.snapshots'::regclass and attname = 'error_code'";

/** Sets refdata.snapshots.error_code's comment (COMMENT takes no parameters: the text as a literal). */
export const commentErrorCodes = (description: string): string => `comment on column refdata.snapshots.error_code is '${description.replaceAll("'", "''")}'`;
