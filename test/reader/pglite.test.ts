import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { chargeCodeVersionDiff, entriesAsOf, entriesDiff } from '../../src/db/functions.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { FeedReader, idsInReadOrder } from '../feed/feed-reader.ts';
import { syncSandbox, V2024, V2025 } from './fixture.ts';

// The embedded database (PGlite) is what `refsync sync` and `demo` use without DATABASE_URL: the
// functions and grants of the migrations have to work there as well.
describe('on embedded PGlite', () => {
  let db: Database;
  let sb: Sandbox;

  beforeAll(async () => {
    db = await openDatabase({ dataDir: 'memory://' });
    await migrateDatabase(db);
    sb = await useSandbox();
    await syncSandbox(db, sb, ['charge_codes']);
  });
  afterAll(() => db?.close());

  it('applies every migration, and the functions answer', async () => {
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
    expect(rows[0]!.n).toBeGreaterThanOrEqual(3);
    const diff = await chargeCodeVersionDiff(db, V2024, V2025);
    expect(
      diff
        .filter((r) => r.change === 'removed')
        .map((r) => r.code)
        .sort(),
    ).toEqual(['DTW', 'NOA', 'TON']);
    expect(diff.find((r) => r.code === 'DET')?.changed_fields).toEqual(['description']);
    const now = await entriesAsOf(db, 'charge_codes', new Date(), { variant: V2025 });
    expect(now.length).toBe(46);
    const { rows: cc } = await db.query<{ n: number }>('select count(*)::int as n from refdata.charge_codes_as_of(now(), $1)', [V2024]);
    expect(cc[0]!.n).toBe(44);
    // Before its first sync the list was empty: from then to now, every code of a version was added.
    const since = await entriesDiff(db, 'charge_codes', new Date(0), new Date(), { variant: V2025 });
    expect(since.length).toBe(46);
    expect(new Set(since.map((r) => r.change))).toEqual(new Set(['added']));
  });

  it('types the charge codes view from the served values, as on Postgres', async () => {
    const { rows } = await db.query<{ attname: string; type: string }>(
      `select attname, format_type(atttypid, atttypmod) as type from pg_attribute
       where attrelid = 'refdata.charge_codes'::regclass and attname in ('is_active', 'category') order by attname`,
    );
    expect(rows).toEqual([
      { attname: 'category', type: 'text' },
      { attname: 'is_active', type: 'boolean' },
    ]);
    const { rows: inactive } = await db.query<{ code: string }>(
      'select code from refdata.charge_codes_history where version = $1 and not is_active and valid_to is null',
      [V2025],
    );
    expect(inactive.map((r) => r.code)).toEqual(['MSC']);
  });

  it('serves the change feed: every change once, in positions that sort, paged', async () => {
    sb.control.modifyEntry('charge_codes', 'DET', { description: 'Detention, per hour' }, { version: V2025 });
    sb.control.removeEntry('charge_codes', 'DTW', { version: V2024 });
    await syncSandbox(db, sb, ['charge_codes']);
    const { rows: recorded } = await db.query<{ id: number }>('select id from refdata.entry_changes order by id');
    expect(recorded.length).toBeGreaterThan(0);
    const reader = new FeedReader(db, 2);
    await reader.drain();
    const { increasing, ids } = idsInReadOrder(reader);
    expect(increasing).toBe(true);
    expect(ids).toEqual(recorded.map((r) => Number(r.id)));
  });
});
