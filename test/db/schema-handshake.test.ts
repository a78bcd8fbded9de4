// The handshake of docs/production.md ("Upgrading"), as a user meets it: commands run as child
// processes against a database behind this refsync (an older release's migrations only) and one
// ahead of it (a migration row this refsync does not ship), on Postgres and on embedded PGlite.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { shippedMigrations } from '../../src/db/schema-version.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, dropTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { migrateUpTo, recordNewerMigration, schemaFootprint } from '../helpers/schema.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const shipped = shippedMigrations().length;
const aheadLine = `the database was migrated by a newer refsync (database schema version ${shipped + 1}, this refsync ships schema version ${shipped})`;
const behindLine = `the database is behind this refsync (database schema version ${shipped - 1}, this refsync ships schema version ${shipped}); run \`refsync migrate\` first`;

let sb: Sandbox;
const dropLater: string[] = [];
beforeAll(async () => {
  sb = await useSandbox();
});
afterAll(async () => {
  for (const name of dropLater) await dropTestDatabase(name);
});

/** A fresh Postgres database of this file, empty (no refsync schema at all). */
async function emptyDatabase() {
  const { name, url } = await createTestDatabase();
  dropLater.push(name);
  const db = await openDatabase({ url, poolSize: 2 });
  await db.query('drop schema refdata cascade');
  await db.query('drop schema drizzle cascade');
  return { url, db };
}

const env = (databaseUrl: string) => sandboxEnv(sb, { DATABASE_URL: databaseUrl, REFSYNC_LISTS: 'shipment_modes', REDIS_URL: 'redis://127.0.0.1:1' });

describe('on Postgres', () => {
  it('a database ahead: every command that opens it, migrate included, exits 2 with one line naming both schema versions, and writes nothing', async () => {
    const { url, db } = await emptyDatabase();
    try {
      await migrateDatabase(db);
      await recordNewerMigration(db);
      const before = await schemaFootprint(db);
      for (const args of [['migrate'], ['sync'], ['worker'], ['status'], ['changes'], ['alerts'], ['prune'], ['export-dbt']]) {
        const res = await runCli(args, { env: env(url) });
        expect({ args, code: res.code, stderr: res.stderr }).toEqual({
          args,
          code: 2,
          stderr: `refsync: ${aheadLine}; upgrade refsync, or roll the database back\n`,
        });
      }
      expect(await schemaFootprint(db)).toEqual(before);
    } finally {
      await db.close();
    }
  });

  it('a database behind: sync and worker (and the reading commands, whose queries need the later columns) exit 2 naming `refsync migrate` and write nothing; after migrate, sync works', async () => {
    const { url, db } = await emptyDatabase();
    try {
      await migrateUpTo(db, shipped - 1);
      const before = await schemaFootprint(db);
      for (const args of [['sync'], ['worker'], ['status'], ['changes']]) {
        const res = await runCli(args, { env: env(url) });
        expect({ args, code: res.code, stderr: res.stderr }).toEqual({ args, code: 2, stderr: `refsync: ${behindLine}\n` });
      }
      expect(await schemaFootprint(db)).toEqual(before);

      expect(await runCli(['migrate'], { env: env(url) })).toMatchObject({ code: 0, stdout: expect.stringContaining(`migrations applied: ${shipped}`) });
      expect(await runCli(['sync'], { env: env(url) })).toMatchObject({ code: 0 });
      expect((await schemaFootprint(db)).snapshots).toBe(1);
    } finally {
      await db.close();
    }
  });
});

/** Each PGlite case runs three CLI processes that each open and check the embedded database (WASM): slow on a loaded 2-core runner. */
const PGLITE_CASE_MS = 180_000;

describe('on embedded PGlite', () => {
  const dir = testTempDir('h30-refsync-handshake');
  const dataDir = (case_: string) => join(dir, case_, '.refsync', 'pgdata');
  const pglite = (case_: string) => openDatabase({ dataDir: dataDir(case_) });
  const embeddedEnv = () => sandboxEnv(sb, { REFSYNC_LISTS: 'shipment_modes' });

  it(
    'a database ahead: sync, migrate and status exit 2 with one line naming both schema versions, and write nothing',
    async () => {
      let db = await pglite('ahead');
      await migrateDatabase(db);
      await recordNewerMigration(db);
      const before = await schemaFootprint(db);
      await db.close();
      for (const args of [['sync'], ['migrate'], ['status']]) {
        const res = await runCli(args, { env: embeddedEnv(), cwd: join(dir, 'ahead') });
        expect({ args, code: res.code, stderr: res.stderr }).toEqual({
          args,
          code: 2,
          stderr: `refsync: ${aheadLine}; upgrade refsync, or roll the database back\n`,
        });
      }
      db = await pglite('ahead');
      expect(await schemaFootprint(db)).toEqual(before);
      await db.close();
    },
    PGLITE_CASE_MS,
  );

  it(
    'a database behind: sync exits 2 naming `refsync migrate` and writes nothing; after migrate, sync works',
    async () => {
      let db = await pglite('behind');
      await migrateUpTo(db, shipped - 1);
      const before = await schemaFootprint(db);
      await db.close();
      const cwd = join(dir, 'behind');
      expect(await runCli(['sync'], { env: embeddedEnv(), cwd })).toMatchObject({ code: 2, stderr: `refsync: ${behindLine}\n` });
      db = await pglite('behind');
      expect(await schemaFootprint(db)).toEqual(before);
      await db.close();
      expect(await runCli(['migrate'], { env: embeddedEnv(), cwd })).toMatchObject({ code: 0 });
      expect(await runCli(['sync'], { env: embeddedEnv(), cwd })).toMatchObject({ code: 0 });
    },
    PGLITE_CASE_MS,
  );
});
