import { describe, expect, it } from 'vitest';
import { catalog } from '../../src/catalog/catalog.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { createTestDatabase, dropTestDatabase, useTestDatabase } from '../helpers/db.ts';

describe('migrations', () => {
  const t = useTestDatabase();

  it('create every table and view of the contract', async () => {
    const { rows } = await t.db.query<{ table_name: string; table_type: string }>(
      "select table_name, table_type from information_schema.tables where table_schema = 'refdata' order by 1",
    );
    const names = rows.map((r) => r.table_name);
    for (const table of ['sync_runs', 'snapshots', 'entries', 'entry_changes', 'alerts']) {
      expect(names).toContain(table);
    }
    expect(names).toContain('current_entries');
    for (const list of catalog) expect(names, `view for ${list.key}`).toContain(list.key);
  });

  it('name the variant version for charge codes and carrier for carrier package types', async () => {
    const { rows } = await t.db.query<{ table_name: string; column_name: string }>(
      "select table_name, column_name from information_schema.columns where table_schema = 'refdata' and table_name in ('charge_codes', 'carrier_package_types', 'equipment_types')",
    );
    const cols = (table: string) => rows.filter((r) => r.table_name === table).map((r) => r.column_name);
    expect(cols('charge_codes')).toContain('version');
    expect(cols('charge_codes')).not.toContain('variant');
    expect(cols('carrier_package_types')).toContain('carrier');
    expect(cols('equipment_types')).toContain('variant');
  });

  it('comment every table, view and column of schema refdata', async () => {
    const { rows } = await t.db.query<{ relname: string; attname: string | null }>(`
      select c.relname, a.attname
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'refdata'
      left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where c.relkind in ('r', 'v')
        and (obj_description(c.oid, 'pg_class') is null
             or (a.attname is not null and col_description(c.oid, a.attnum) is null))`);
    expect(rows).toEqual([]);
  });

  it('is idempotent and safe from two connections at once', async () => {
    const { name, url } = await createTestDatabase();
    try {
      const a = await openDatabase({ url, poolSize: 2 });
      const b = await openDatabase({ url, poolSize: 2 });
      await Promise.all([migrateDatabase(a), migrateDatabase(b)]);
      await migrateDatabase(a);
      const { rows } = await a.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
      expect(rows[0]?.n).toBeGreaterThanOrEqual(2);
      await a.close();
      await b.close();
    } finally {
      await dropTestDatabase(name);
    }
  });

  it('runs the same migrations on embedded PGlite', async () => {
    const db = await openDatabase({ dataDir: 'memory://' });
    try {
      await migrateDatabase(db);
      await migrateDatabase(db);
      const { rows } = await db.query<{ n: number }>("select count(*)::int as n from information_schema.views where table_schema = 'refdata'");
      // current_entries, list_sync_times, and per list its view and its typed history view.
      expect(rows[0]?.n).toBe(2 * catalog.length + 2);
    } finally {
      await db.close();
    }
  });
});
