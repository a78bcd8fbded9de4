import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { refsync, root, syncSandbox } from './fixture.ts';

interface DbtColumn {
  name: string;
  description: string;
  data_type?: string;
  data_tests?: unknown[];
}
interface DbtTable {
  name: string;
  description: string;
  data_tests?: unknown[];
  columns: DbtColumn[];
}

const committed = () => readFileSync(join(root, 'dbt/sources.yml'), 'utf8');

describe('dbt sources.yml', () => {
  const t = useTestDatabase();
  beforeAll(async () => syncSandbox(t.db, await useSandbox()));

  it('the committed dbt/sources.yml is what refsync export-dbt prints without a database (and writes with --out)', async () => {
    const res = await refsync(['export-dbt'], {});
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(committed());
    const out = join(mkdtempSync(join(tmpdir(), 'refsync-dbt-')), 'sources.yml');
    const written = await refsync(['export-dbt', '--out', out], {});
    expect(written.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(committed());
  });

  it('with DATABASE_URL: names every view of schema refdata with every column, in order, with the words of the COMMENTs and the typed columns\' data_type', async () => {
    const exported = await refsync(['export-dbt'], { DATABASE_URL: t.url });
    expect(exported.stderr).toBe('');
    const doc = parse(exported.stdout);
    expect(doc.version).toBe(2);
    expect(doc.sources).toHaveLength(1);
    const source = doc.sources[0];
    expect(source).toMatchObject({ name: 'refdata', schema: 'refdata' });
    const tables = source.tables as DbtTable[];

    const { rows: relations } = await t.db.query<{ name: string; kind: string; description: string | null }>(`
      select c.relname as name, c.relkind::text as kind, obj_description(c.oid, 'pg_class') as description
      from pg_class c join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'refdata'
      where c.relkind in ('r', 'v')`);
    const { rows: columns } = await t.db.query<{ table_name: string; column_name: string; description: string | null; data_type: string }>(`
      select c.table_name, c.column_name, col_description(format('refdata.%I', c.table_name)::regclass, c.ordinal_position) as description,
             format_type(a.atttypid, a.atttypmod) as data_type
      from information_schema.columns c
      join pg_attribute a on a.attrelid = format('refdata.%I', c.table_name)::regclass and a.attname = c.column_name
      where c.table_schema = 'refdata'
      order by c.table_name, c.ordinal_position`);

    const views = relations.filter((r) => r.kind === 'v').map((r) => r.name).sort();
    const described = tables.map((x) => x.name);
    for (const view of views) expect(described, `view ${view}`).toContain(view);
    const accessorials = tables.find((x) => x.name === 'accessorials')!;
    expect(accessorials.columns.find((c) => c.name === 'is_charge_code')).toEqual({
      name: 'is_charge_code',
      data_type: 'boolean',
      description: expect.stringMatching(/^Field "is_charge_code" as served, typed boolean \(inferred from its values\); since \d{4}-\d{2}-\d{2} \(snapshot \d+\)\.$/),
    });
    expect(tables.find((x) => x.name === 'charge_codes_history')!.columns.find((c) => c.name === 'is_active')?.data_type).toBe('boolean');
    expect(described).toContain('entries');
    expect(described).toContain('entry_changes');

    for (const table of tables) {
      const relation = relations.find((r) => r.name === table.name);
      expect(relation, `${table.name} exists`).toBeDefined();
      expect(table.description, `${table.name} description`).toBe(relation!.description);
      const dbColumns = columns.filter((c) => c.table_name === table.name);
      expect(table.columns.map((c) => c.name), `${table.name} columns`).toEqual(dbColumns.map((c) => c.column_name));
      for (const column of table.columns) {
        const db = dbColumns.find((c) => c.column_name === column.name)!;
        expect(column.description, `${table.name}.${column.name}`).toBe(db.description);
        if (column.data_type) expect(column.data_type.replace('timestamptz', 'timestamp with time zone'), `${table.name}.${column.name}`).toBe(db.data_type);
      }
    }
  });

  it('tests the keys of the current views: unique together and not null', async () => {
    const tables = parse(committed()).sources[0].tables as DbtTable[];
    const keyOf = (name: string) => {
      const test = tables.find((x) => x.name === name)!.data_tests![0] as Record<string, { arguments: { combination_of_columns: string[] } }>;
      return test['dbt_utils.unique_combination_of_columns']!.arguments.combination_of_columns;
    };
    expect(keyOf('current_entries')).toEqual(['environment', 'list_key', 'variant', 'entry_key']);
    expect(keyOf('charge_codes')).toEqual(['environment', 'version', 'entry_key']);
    expect(keyOf('carrier_package_types')).toEqual(['environment', 'carrier', 'entry_key']);
    expect(keyOf('hazmat')).toEqual(['environment', 'variant', 'entry_key']);
    const charge = tables.find((x) => x.name === 'charge_codes')!;
    for (const key of ['environment', 'version', 'entry_key']) {
      expect(charge.columns.find((c) => c.name === key)!.data_tests).toContain('not_null');
    }
    // The keys hold on real data (every list synced from the sandbox): no duplicates in any current view.
    for (const table of tables.filter((x) => x.data_tests?.length && x.name !== 'entries')) {
      const key = keyOf(table.name);
      const { rows } = await t.db.query(`select ${key.join(', ')} from refdata.${table.name} group by ${key.join(', ')} having count(*) > 1`);
      expect(rows, table.name).toEqual([]);
    }
  });
});
