// An install made by an early refsync (commit 1905028: 4 migrations, its own sandbox, migrate and
// two syncs; test/fixtures/upgrade-1905028.sh rebuilds the dump) is upgraded by this code as a user
// would: the handshake asks for `refsync migrate`, migrate, sync. Nothing it had recorded may fire
// again, its history must read as before, and a real change afterwards is recorded once.
//
// The sandbox's bundled data has moved on since 1905028 (charge codes gained `is_active`, for one),
// and the fixture's second sync saw entries the old sandbox was changed to serve. A sync against
// today's defaults would therefore record real changes, honestly. So the sandbox here serves exactly
// what the old code last stored (its current rows' payloads, per list and variant): every list is
// then unchanged for the upgraded code unless it misreads the old rows, which is what is tested.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { shippedMigrations } from '../../src/db/schema-version.ts';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { feedCaughtUp } from '../feed/feed-reader.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, dropTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';

const dump = readFileSync(new URL('../fixtures/upgrade-1905028.sql', import.meta.url), 'utf8');
// The settings the fixture was synced with (upgrade-1905028.sh).
const fixtureSettings = {
  REFSYNC_ENVIRONMENT: 'sandbox',
  REFSYNC_LISTS: 'shipment_modes,equipment_types,accessorials,charge_codes,carrier_package_types',
  REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,unpinned',
  REFSYNC_CARRIERS: 'fedex,ups',
  REFSYNC_ALERT_ON: 'added,removed,modified,reappeared,schema_changed,held,failed',
};

let sb: Sandbox;
let db: Database;
let name = '';
let url = '';
beforeAll(async () => {
  sb = await useSandbox();
  ({ name, url } = await createTestDatabase());
  // The dump empties search_path for its session: it gets a connection of its own.
  const restore = await openDatabase({ url, poolSize: 1 });
  await restore.query('drop schema refdata cascade; drop schema drizzle cascade');
  await restore.query(dump);
  await restore.close();
  db = await openDatabase({ url, poolSize: 2 });
});
afterAll(async () => {
  await db?.close();
  if (name) await dropTestDatabase(name);
});

const cli = (args: string[]) => runCli(args, { env: sandboxEnv(sb, { DATABASE_URL: url, ...fixtureSettings }), timeoutMs: 120_000 });

/** The sandbox serves, per list and variant, the entries the old code last stored as current. */
async function serveWhatTheFixtureHolds(): Promise<void> {
  const { rows } = await db.query<{ list_key: ListKey; variant: string; payloads: Record<string, unknown>[] }>(
    `select list_key, variant, jsonb_agg(payload order by entry_key) as payloads
     from refdata.entries where valid_to is null group by list_key, variant`,
  );
  for (const r of rows) {
    // `unpinned` is what the sandbox serves without a version header: its latest version ({}).
    const version = r.variant === 'unpinned' ? {} : { version: r.variant };
    const variant = r.list_key === 'charge_codes' ? version : r.list_key === 'carrier_package_types' ? { carrier: r.variant } : {};
    sb.control.setEntries(r.list_key, r.payloads, variant);
  }
}

/** Every entry valid at `at`, as the contract's as-of query reads it. */
async function asOf(at: string) {
  const { rows } = await db.query(
    `select list_key, variant, entry_key, code, description, payload from refdata.entries
     where valid_from <= $1 and (valid_to is null or valid_to > $1) order by list_key, variant, entry_key`,
    [at],
  );
  return rows;
}

const count = async (sql: string) => (await db.query<{ n: number }>(`select count(*)::int as n from ${sql}`)).rows[0]!.n;

describe('an install of refsync 1905028, upgraded', () => {
  it('asks for migrate, migrates, syncs without re-firing anything, keeps its history, and records a real change once', async () => {
    // What the old release left: two runs, the second with changes (upgrade-1905028.sh).
    const { rows: runs } = await db.query<{ finished_at: string }>('select finished_at::text from refdata.sync_runs order by id');
    expect(runs).toHaveLength(2);
    const between = runs[0]!.finished_at;
    const { rows: nowRows } = await db.query<{ now: string }>('select now()::text as now');
    const beforeUpgrade = nowRows[0]!.now;
    const asOfBetween = await asOf(between);
    const asOfBefore = await asOf(beforeUpgrade);
    const changes = await count('refdata.entry_changes');
    const alerts = await count('refdata.alerts');
    expect(changes).toBe(4);
    expect(alerts).toBe(4);

    // The handshake: an older schema is refused for sync, naming `refsync migrate`.
    const refused = await cli(['sync']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `database schema version 4, this refsync ships schema version ${shippedMigrations().length}); run \`refsync migrate\` first`,
    );
    const migrated = await cli(['migrate']);
    expect(migrated.code, migrated.stderr).toBe(0);

    await serveWhatTheFixtureHolds();
    const sync = await cli(['sync', '--json']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(await count('refdata.entry_changes'), 'no change re-detected').toBe(changes);
    expect(await count('refdata.alerts'), 'no alert re-fired').toBe(alerts);
    expect(await count("refdata.snapshots where run_id = (select max(id) from refdata.sync_runs) and (changed or status <> 'ok')")).toBe(0);
    expect(await count('refdata.snapshots where run_id = (select max(id) from refdata.sync_runs)')).toBe(7);

    expect(
      await count('(select 1 from refdata.entries where valid_to is null group by environment, list_key, variant, entry_key having count(*) > 1) d'),
      'one open history row per key',
    ).toBe(0);
    expect(await asOf(between), 'as of between the old syncs').toEqual(asOfBetween);
    expect(await asOf(beforeUpgrade), 'as of just before the upgrade').toEqual(asOfBefore);

    // Typed views: every synced list has its recorded columns and its two views, typed.
    expect(await count('(select distinct list_key from refdata.list_columns where replaced_at is null) l')).toBe(5);
    const { rows: typed } = await db.query<{ data_type: string }>(
      `select data_type from information_schema.columns where table_schema = 'refdata' and table_name = 'equipment_types' and column_name = 'id'`,
    );
    expect(typed).toEqual([{ data_type: 'bigint' }]);
    expect(await count('refdata.charge_codes_history where version = $$2024-06-11$$ and code = $$SOC$$')).toBe(2);

    // A real change afterwards is recorded once, with its alert, and a further sync adds nothing.
    sb.control.modifyEntry('shipment_modes', 'FTL', { description: 'Full Truckload (dedicated)' });
    expect((await cli(['sync'])).code).toBe(0);
    const { rows: recorded } = await db.query(
      'select entry_key, change, changed_fields from refdata.entry_changes where id > (select max(id) - 1 from refdata.entry_changes) order by id',
    );
    expect(await count('refdata.entry_changes')).toBe(changes + 1);
    expect(recorded).toEqual([{ entry_key: 'FTL', change: 'modified', changed_fields: ['description'] }]);
    expect(await count('refdata.alerts')).toBe(alerts + 1);
    expect(await count("refdata.entries where list_key = 'shipment_modes' and entry_key = 'FTL'")).toBe(2);
    // The change feed serves the history the old release wrote (txid 0, in id order) first, then the
    // change recorded after the upgrade: every change once, from the start of history.
    await feedCaughtUp(db);
    const { rows: feed } = await db.query<{ position: string; id: number; entry_key: string }>(
      'select position, id, entry_key from refdata.change_feed(null, 100)',
    );
    const { rows: ids } = await db.query<{ id: number }>('select id from refdata.entry_changes order by id');
    expect(feed.map((r) => r.id)).toEqual(ids.map((r) => r.id));
    expect(feed.map((r) => r.position)).toEqual(feed.map((r) => r.position).sort());
    expect(feed.slice(0, changes).every((r) => r.position.startsWith('00000000000000000000-'))).toBe(true);
    expect(feed.at(-1)?.entry_key).toBe('FTL');
    expect((await cli(['sync'])).code).toBe(0);
    expect(await count('refdata.entry_changes')).toBe(changes + 1);
    expect(await count('refdata.alerts')).toBe(alerts + 1);
  }, 300_000);
});
