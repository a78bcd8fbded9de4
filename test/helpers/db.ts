import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';

export interface TestDatabase {
  /** The open database (node-postgres pool), valid inside the test file's tests. */
  readonly db: Database;
  readonly url: string;
  readonly name: string;
}

function urlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('databaseServerUrl') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates a fresh database from the migrated template; the caller owns dropping it. */
export async function createTestDatabase(prefix = 'refsync_t'): Promise<{ name: string; url: string }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const template = inject('templateDatabase');
  await admin(async (client) => {
    // Two files copying the template at the same instant can collide; a short retry settles it.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`create database ${name} template ${template}`);
        return;
      } catch (err) {
        if (attempt >= 5 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
  });
  return { name, url: urlFor(inject('databaseServerUrl'), name) };
}

/** A fresh database without refsync's schema (refdata dropped), as one never migrated; the caller owns dropping it. */
export async function createUnmigratedDatabase(prefix: string): Promise<{ name: string; url: string }> {
  const created = await createTestDatabase(prefix);
  const client = new pg.Client({ connectionString: created.url });
  await client.connect();
  try {
    await client.query('drop schema refdata cascade');
  } finally {
    await client.end();
  }
  return created;
}

export async function dropTestDatabase(name: string): Promise<void> {
  await admin((client) => client.query(`drop database if exists ${name} with (force)`));
}

/**
 * Gives the test file its own database, copied from the migrated template. It is dropped after
 * a passing file and kept after a failing one, with its name printed for inspection.
 */
export function useTestDatabase(): TestDatabase {
  let database: Database | undefined;
  let name = '';
  let url = '';
  let failed = false;
  beforeAll(async () => {
    ({ name, url } = await createTestDatabase());
    database = await openDatabase({ url, poolSize: 6, applicationName: 'refsync-test' });
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') failed = true;
  });
  afterAll(async () => {
    await database?.close();
    if (failed) console.log(`[tests] kept database ${name} of a failing test file for inspection`);
    else if (name) await dropTestDatabase(name);
  });
  return {
    get db() {
      if (!database) throw new Error('useTestDatabase: the database is open only inside tests');
      return database;
    },
    get url() {
      return url;
    },
    get name() {
      return name;
    },
  };
}

/**
 * The database with some of its methods replaced, to watch or change what a test's code sends. The
 * others call the database's own: not through the copy, whose transaction would otherwise go
 * through a replaced withConnection.
 */
export function databaseWith(db: Database, replaced: Partial<Pick<Database, 'query' | 'transaction' | 'withConnection'>>): Database {
  return {
    kind: db.kind,
    query: (text: string, params?: unknown[]) => db.query(text, params),
    script: (statements: readonly string[]) => db.script(statements),
    transaction: (fn, opening) => db.transaction(fn, opening),
    withConnection: (fn) => db.withConnection(fn),
    close: () => db.close(),
    ...replaced,
  } as Database;
}
