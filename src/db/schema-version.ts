// The handshake between a database and this refsync's migrations (docs/production.md, "Upgrading").
// The database records what was applied in drizzle.__drizzle_migrations (one row per migration,
// `created_at` = the journal's `when`); this refsync ships migrations/meta/_journal.json. A schema
// version is a count of migrations: what this refsync ships, what the database has applied.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config/errors.ts';
import type { Queryable } from './database.ts';
import { journalPresent, appliedMigrations } from './migrations-sql.ts';
import { appliedMigrationsFollowingRestore } from './feed-epoch-sql.ts';

export const migrationsFolder = fileURLToPath(new URL('../../migrations', import.meta.url));

interface JournalEntry {
  tag: string;
  when: number;
}

let shippedJournal: readonly JournalEntry[] | undefined;

/** The migrations this refsync ships, in order: read once, as they ship with the process's code (a worker checks before each run job). */
export function shippedMigrations(): readonly JournalEntry[] {
  if (!shippedJournal) {
    const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: JournalEntry[] };
    shippedJournal = journal.entries.map(({ tag, when }) => ({ tag, when }));
  }
  return shippedJournal;
}

/** The schema version this refsync ships: its number of migrations, and the last one's name. */
export function shippedSchemaVersion(): { version: number; tag: string } {
  const entries = shippedMigrations();
  return { version: entries.length, tag: entries.at(-1)?.tag ?? 'none' };
}

export interface SchemaCheck {
  /** current: every shipped migration applied and nothing else; behind: one is missing; ahead: one unknown is applied. */
  state: 'current' | 'behind' | 'ahead';
  /** Migrations the database has applied (its schema version). */
  database: number;
  /** Migrations this refsync ships (its schema version). */
  shipped: number;
}

/**
 * Compares the applied migrations with the shipped ones. A row whose `created_at` is no shipped
 * migration's `when` came from a newer refsync: ahead, whatever else holds (its schema may have
 * moved on in ways this code cannot write). Otherwise behind when a shipped migration is later than
 * the last applied one, which is drizzle's own rule for what is still to apply (src/db/migrate.ts).
 */
export async function checkSchema(db: Queryable): Promise<SchemaCheck> {
  const { rows: exists } = await db.query<{ ok: boolean }>(journalPresent);
  return exists[0]?.ok ? checkMigratedSchema(db) : compareWithShipped([]);
}

/**
 * checkSchema on a database known to have the journal (a worker that started on it, current): one
 * statement where checkSchema takes two, as a worker checks before each run job. A journal dropped
 * since fails the statement. `followRestore`: the same statement first records a restore of the
 * database as a new change feed epoch (src/db/feed-epoch.ts), before the run job writes.
 */
export async function checkMigratedSchema(db: Queryable, options: { followRestore?: boolean } = {}): Promise<SchemaCheck> {
  const { rows } = await db.query<{ created_at: string }>(options.followRestore ? appliedMigrationsFollowingRestore : appliedMigrations);
  return compareWithShipped(rows.map((r) => Number(r.created_at)));
}

function compareWithShipped(applied: readonly number[]): SchemaCheck {
  const shipped = shippedMigrations();
  const known = new Set(shipped.map((m) => m.when));
  const last = applied.length ? Math.max(...applied) : -Infinity;
  let state: SchemaCheck['state'] = 'current';
  if (applied.some((when) => !known.has(when))) state = 'ahead';
  else if (shipped.some((m) => m.when > last)) state = 'behind';
  return { state, database: applied.length, shipped: shipped.length };
}

/** A database this refsync must not use as it is: exit 2, one line (a ConfigError). */
export class SchemaMismatchError extends ConfigError {
  readonly check: SchemaCheck;
  constructor(check: SchemaCheck) {
    super(schemaMismatchLine(check));
    this.check = check;
  }
}

/** The one line for a database ahead or behind, naming both schema versions. */
export function schemaMismatchLine(check: SchemaCheck): string {
  const versions = `database schema version ${check.database}, this refsync ships schema version ${check.shipped}`;
  if (check.state === 'ahead') return `the database was migrated by a newer refsync (${versions}); upgrade refsync, or roll the database back`;
  return `the database is behind this refsync (${versions}); run \`refsync migrate\` first`;
}

/** Refuses a database ahead of this refsync or behind it; nothing is written before this passes. */
export async function assertSchemaCurrent(db: Queryable): Promise<SchemaCheck> {
  const check = await checkSchema(db);
  if (check.state !== 'current') throw new SchemaMismatchError(check);
  return check;
}
