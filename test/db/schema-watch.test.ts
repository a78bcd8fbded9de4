// The check a running worker makes before each run job (docs/production.md, "Upgrading"): a
// fleet's slot pays it once per source, so it is one statement, where the handshake of a command
// (checkSchema, which must also answer on a database never migrated) takes two.
import { describe, expect, it } from 'vitest';
import { checkSchema } from '../../src/db/schema-version.ts';
import { createSchemaWatch } from '../../src/queue/worker/schema-watch.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { databaseWith, useTestDatabase } from '../helpers/db.ts';
import { recordNewerMigration } from '../helpers/schema.ts';

const t = useTestDatabase();

describe("a running worker's schema check", () => {
  it('is one statement before each run job, and finds a newer migration as the handshake does', async () => {
    const sent: string[] = [];
    const db = databaseWith(t.db, {
      query: (text, params) => {
        sent.push(text);
        return t.db.query(text, params);
      },
    });
    const newer: unknown[] = [];
    const watch = createSchemaWatch({ db, intervalMs: 60_000, logger: silentLogger, onNewer: (check) => newer.push(check) });

    expect(await watch.newerSchema()).toBe(false);
    // The same statement records a restore of the database as a new change feed epoch (src/db/feed-epoch.ts).
    expect(sent).toEqual(['select m.created_at from refdata.change_feed_follow_restore() as e, drizzle.__drizzle_migrations m']);

    await recordNewerMigration(t.db);
    const handshake = await checkSchema(t.db);
    expect(handshake.state).toBe('ahead');
    expect(await watch.newerSchema()).toBe(true);
    expect(newer).toEqual([handshake]);
    expect(sent).toHaveLength(2);
    await watch.close();
  });
});
