import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { freshnessFor } from '../../src/dbt/freshness.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { listKeys } from '../../src/catalog/list-keys.ts';

const listKeysSorted = [...listKeys].sort();
import { refsync, root, syncSandbox } from './fixture.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

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
  config?: { freshness?: unknown; loaded_at_field?: string };
  freshness?: unknown;
  loaded_at_field?: string;
}

type Named = Record<string, Record<string, unknown>>;
/** A test's arguments in either syntax: under `arguments:` (dbt >= 1.10) or beside `config:` (1.8). */
const argsOf = (body: Record<string, unknown>) => (body.arguments ?? body) as Record<string, unknown>;
const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The SQL that finds rows failing one column test, the way dbt's generic tests are written. */
function failingRowsSql(table: string, column: string, test: unknown): string {
  const rel = `refdata.${q(table)}`;
  if (test === 'not_null') return `select 1 from ${rel} where ${q(column)} is null`;
  if (test === 'unique') return `select ${q(column)} from ${rel} group by 1 having count(*) > 1`;
  const [name, body] = Object.entries(test as Named)[0]!;
  const args = argsOf(body);
  if (name === 'accepted_values') {
    const values = (args.values as string[]).map((v) => `'${v.replace(/'/g, "''")}'`).join(', ');
    return `select 1 from ${rel} where ${q(column)} not in (${values})`;
  }
  if (name === 'relationships') {
    const to = /^source\('refdata', '(\w+)'\)$/.exec(String(args.to))![1]!;
    return `select 1 from ${rel} c left join refdata.${q(to)} p on p.${q(String(args.field))} = c.${q(column)} where c.${q(column)} is not null and p.${q(String(args.field))} is null`;
  }
  throw new Error(`no SQL for test ${name}`);
}

const committed = () => readFileSync(join(root, 'dbt/sources.yml'), 'utf8');

describe('dbt sources.yml', () => {
  const t = useTestDatabase();
  let sbForChanges: Sandbox;
  beforeAll(async () => {
    sbForChanges = await useSandbox();
    await syncSandbox(t.db, sbForChanges);
  });

  it('the committed dbt/sources.yml is what refsync export-dbt prints without a database (and writes with --out)', async () => {
    const res = await refsync(['export-dbt'], {});
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(committed());
    const out = join(testTempDir('refsync-dbt'), 'sources.yml');
    const written = await refsync(['export-dbt', '--out', out], {});
    expect(written.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(committed());
  });

  it("with DATABASE_URL: names every view of schema refdata with every column, in order, with the words of the COMMENTs and the typed columns' data_type", async () => {
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

    const views = relations
      .filter((r) => r.kind === 'v')
      .map((r) => r.name)
      .sort();
    const described = tables.map((x) => x.name);
    for (const view of views) expect(described, `view ${view}`).toContain(view);
    const accessorials = tables.find((x) => x.name === 'accessorials')!;
    expect(accessorials.columns.find((c) => c.name === 'is_charge_code')).toEqual({
      name: 'is_charge_code',
      data_type: 'boolean',
      description: expect.stringMatching(
        /^Field "is_charge_code" as served, typed boolean \(inferred from its values\); since \d{4}-\d{2}-\d{2} \(snapshot \d+\)\.$/,
      ),
    });
    expect(tables.find((x) => x.name === 'charge_codes_history')!.columns.find((c) => c.name === 'is_active')?.data_type).toBe('boolean');
    expect(described).toContain('entries');
    expect(described).toContain('entry_changes');

    for (const table of tables) {
      const relation = relations.find((r) => r.name === table.name);
      expect(relation, `${table.name} exists`).toBeDefined();
      expect(table.description, `${table.name} description`).toBe(relation!.description);
      const dbColumns = columns.filter((c) => c.table_name === table.name);
      expect(
        table.columns.map((c) => c.name),
        `${table.name} columns`,
      ).toEqual(dbColumns.map((c) => c.column_name));
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

  it('every test it declares holds on a synced database: keys, vocabularies and relationships between entries, changes, snapshots and runs', async () => {
    sbForChanges.control.modifyEntry('shipment_modes', 'LTL', { description: 'Less than truckload (edited)' });
    await syncSandbox(t.db, sbForChanges, ['shipment_modes']);
    const exported = await refsync(['export-dbt'], { DATABASE_URL: t.url });
    const tables = parse(exported.stdout).sources[0].tables as DbtTable[];
    const relationships: string[] = [];
    let checked = 0;
    for (const table of tables) {
      for (const test of table.data_tests ?? []) {
        const body = (test as Named)['dbt_utils.unique_combination_of_columns']!;
        const columns = (argsOf(body).combination_of_columns as string[]).map(q).join(', ');
        const where = (body.config as { where?: string } | undefined)?.where;
        const { rows } = await t.db.query(
          `select ${columns} from refdata.${q(table.name)} ${where ? `where ${where}` : ''} group by ${columns} having count(*) > 1`,
        );
        expect(rows, `${table.name} ${JSON.stringify(test)}`).toEqual([]);
        checked++;
      }
      for (const column of table.columns) {
        for (const test of column.data_tests ?? []) {
          if (typeof test === 'object' && 'relationships' in (test as Named)) relationships.push(`${table.name}.${column.name}`);
          const { rows } = await t.db.query(failingRowsSql(table.name, column.name, test));
          expect(rows, `${table.name}.${column.name} ${JSON.stringify(test)}`).toEqual([]);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
    // nmfc_codes is keyed by item and sub (code alone repeats): the export tests that key.
    const nmfc = tables.find((x) => x.name === 'nmfc_codes')!;
    expect(nmfc.data_tests).toContainEqual({
      'dbt_utils.unique_combination_of_columns': { arguments: { combination_of_columns: ['environment', 'variant', 'item', 'sub'] } },
    });
    expect(nmfc.columns.map((c) => c.name)).toEqual(expect.arrayContaining(['item', 'sub']));
    const { rows: repeated } = await t.db.query('select code from refdata.nmfc_codes group by environment, code having count(*) > 1');
    expect(repeated.length).toBeGreaterThan(0);
    expect(relationships.sort()).toEqual(['entries.first_snapshot_id', 'entries.last_snapshot_id', 'entry_changes.snapshot_id', 'snapshots.run_id']);
    // Sources for the operational tables behind the history, with their keys.
    for (const name of ['snapshots', 'sync_runs', 'entries', 'entry_changes']) {
      const id = tables.find((x) => x.name === name)!.columns.find((c) => c.name === 'id')!;
      expect(id.data_tests, name).toEqual(['not_null', 'unique']);
    }
  });

  it('declares freshness per list whose loaded_at moves with every successful sync, unchanged ones included', async () => {
    const tables = parse(committed()).sources[0].tables as DbtTable[];
    const lists = tables.filter((x) => x.config?.loaded_at_field);
    expect(lists.map((x) => x.name).sort()).toEqual([...listKeysSorted]);
    const modes = lists.find((x) => x.name === 'shipment_modes')!;
    expect(modes.config!.freshness).toEqual({ warn_after: { count: 2, period: 'hour' }, error_after: { count: 4, period: 'hour' } });
    // What dbt source freshness runs: max(<loaded_at_field>) over the list's view.
    const loadedAt = async () => (await t.db.query<{ at: Date }>(`select max(${modes.config!.loaded_at_field}) as at from refdata.shipment_modes`)).rows[0]!.at;
    const before = await loadedAt();
    expect(before).toBeInstanceOf(Date);
    await syncSandbox(t.db, sbForChanges, ['shipment_modes']);
    const { rows } = await t.db.query<{ changed: boolean }>(`select changed from refdata.snapshots where list_key = 'shipment_modes' order by id desc limit 1`);
    expect(rows[0]!.changed).toBe(false);
    expect((await loadedAt()).getTime()).toBeGreaterThan(before.getTime());
  });

  it('thresholds follow the schedule; --dbt-version 1.8 writes the older syntax; bad options are one line and exit 2', async () => {
    expect(freshnessFor('*/15 * * * *', 'UTC')).toEqual({ warn_after: { count: 30, period: 'minute' }, error_after: { count: 1, period: 'hour' } });
    expect(freshnessFor('30 2 * * *', 'Europe/Berlin')).toEqual({ warn_after: { count: 50, period: 'hour' }, error_after: { count: 100, period: 'hour' } });
    expect(freshnessFor('0 6 * * 1-5', 'UTC')).toEqual({ warn_after: { count: 6, period: 'day' }, error_after: { count: 12, period: 'day' } });
    const daily = await refsync(['export-dbt'], { REFSYNC_SCHEDULE: '0 3 * * *' });
    expect(parse(daily.stdout).sources[0].tables.find((x: DbtTable) => x.name === 'hazmat').config.freshness.warn_after).toEqual({ count: 2, period: 'day' });
    const old = await refsync(['export-dbt', '--dbt-version', '1.8'], {});
    expect(old.code).toBe(0);
    expect(old.stdout).not.toMatch(/^\s+arguments:/m);
    expect(old.stdout).not.toMatch(/^\s+config:\n\s+freshness:/m);
    const hazmat = (parse(old.stdout).sources[0].tables as DbtTable[]).find((x) => x.name === 'hazmat')!;
    expect(hazmat.freshness).toBeDefined();
    expect(hazmat.loaded_at_field).toContain("list_key = 'hazmat'");
    expect(hazmat.data_tests![0]).toEqual({ 'dbt_utils.unique_combination_of_columns': { combination_of_columns: ['environment', 'variant', 'entry_key'] } });
    // The 1.8 syntax says it is for dbt 1.8 and 1.9: both versions (and patch releases) get it, later ones the newer syntax.
    expect(old.stdout).toContain('1.8 and 1.9');
    for (const version of ['1.9', '1.9.4']) expect((await refsync(['export-dbt', '--dbt-version', version], {})).stdout, version).toBe(old.stdout);
    expect((await refsync(['export-dbt', '--dbt-version', '1.11'], {})).stdout).toBe((await refsync(['export-dbt'], {})).stdout);
    for (const args of [
      ['export-dbt', '--dbt-version', '1.7'],
      ['export-dbt', '--schedule', 'every hour'],
    ]) {
      const res = await refsync(args, {});
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });
});
