import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { catalog } from '../../src/catalog/catalog.ts';
import { sqlType, type ColumnType } from '../../src/columns/column-type.ts';
import { runSync } from '../../src/sync/run-sync.ts';
import { createUpstreamClient } from '../../src/upstream/index.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxSource } from '../helpers/source.ts';
import { V2024, V2025 } from '../reader/fixture.ts';

// The per-list views carry one typed column per field the list serves, and follow the data.
describe('typed columns of the per-list views', () => {
  const t = useTestDatabase();
  let sb: Sandbox;

  async function sync(lists?: ListKey[]) {
    const source = sandboxSource(sb, { REFSYNC_CHARGE_CODE_VERSIONS: `${V2024},${V2025}`, REFSYNC_ALERT_ON: 'schema_changed' });
    const client = createUpstreamClient(source);
    try {
      const options: Parameters<typeof runSync>[0] = { db: t.db, sources: [source], clientFor: () => client, trigger: 'cli' };
      if (lists) options.lists = lists;
      const [result] = await runSync(options);
      return result!;
    } finally {
      await client.close();
    }
  }

  const columnsOf = async (view: string) =>
    (
      await t.db.query<{ column_name: string; data_type: string }>(
        `select column_name, format_type(atttypid, atttypmod) as data_type
         from pg_attribute a join lateral (select a.attname as column_name) n on true
         where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum`,
        [`refdata.${view}`],
      )
    ).rows;
  const typeOf = async (view: string, column: string) => (await columnsOf(view)).find((c) => c.column_name === column)?.data_type;

  /** Every typed column of a list's view holds, row by row, the value the sandbox serves. */
  async function expectServedValues(key: ListKey) {
    const { rows: recorded } = await t.db.query<{ field: string; column_name: string; data_type: ColumnType }>(
      'select field, column_name, data_type from refdata.list_columns where list_key = $1 and replaced_at is null',
      [key],
    );
    const variants = key === 'charge_codes' ? [{ version: V2024 }, { version: V2025 }] : key === 'carrier_package_types' ? ['fedex', 'ups', 'usps', 'dhl'].map((carrier) => ({ carrier })) : [{}];
    const variantColumn = key === 'charge_codes' ? 'version' : key === 'carrier_package_types' ? 'carrier' : 'variant';
    const list = catalog.find((l) => l.key === key)!;
    for (const selector of variants) {
      const served = sb.control.getEntries(key, selector);
      const variant = Object.values(selector)[0] ?? '';
      const { rows } = await t.db.query<{ entry_key: string; row: Record<string, unknown> }>(
        `select entry_key, to_jsonb(v) as row from refdata.${key} v where ${variantColumn} = $1`,
        [variant],
      );
      expect(rows.length, `${key}:${variant}`).toBe(served.length);
      const byKey = new Map(rows.map((r) => [r.entry_key, r.row]));
      for (const entry of served) {
        const entryKey = list.keyFields.map((f) => String(entry[f] ?? '')).join('|');
        const row = byKey.get(entryKey);
        expect(row, `${key}:${variant}:${entryKey}`).toBeDefined();
        for (const c of recorded) {
          const value = entry[c.field] ?? null;
          const read = row![c.column_name];
          const expected = value === null ? null : c.data_type === 'text' && typeof value !== 'string' ? JSON.stringify(value) : value;
          expect(read, `${key}.${c.column_name} of ${entryKey}`).toEqual(expected);
        }
      }
    }
  }

  beforeAll(async () => {
    sb = await useSandbox();
    const run = await sync();
    expect(run.status).toBe('succeeded');
  });

  it('after a first sync every list view has a typed column per served field, holding the served values', async () => {
    const accessorials = await columnsOf('accessorials');
    expect(accessorials.slice(0, 7).map((c) => c.column_name)).toEqual(['environment', 'variant', 'entry_key', 'code', 'description', 'payload', 'valid_from']);
    expect(accessorials).toEqual(
      expect.arrayContaining([
        { column_name: 'is_charge_code', data_type: 'boolean' },
        { column_name: 'long_description', data_type: 'text' },
        { column_name: 'id', data_type: 'bigint' },
        { column_name: 'stop_type', data_type: 'text' },
        // Fields named like a contract column keep their own column.
        { column_name: 'code_field', data_type: 'text' },
        { column_name: 'description_field', data_type: 'text' },
      ]),
    );
    expect(await typeOf('charge_codes', 'is_active')).toBe('boolean');
    expect(await typeOf('charge_codes', 'category')).toBe('text');
    expect((await columnsOf('charge_codes'))[1]!.column_name).toBe('version');
    expect(await typeOf('carrier_package_types', 'carrier_field')).toBe('text');
    expect(await typeOf('appointment_types', 'applies_to')).toBe('jsonb');
    expect(await typeOf('equipment_types', 'length_ft')).toBe('bigint');
    for (const { key } of catalog) {
      const served = new Set(sb.control.getEntries(key).flatMap((e) => Object.keys(e)));
      const { rows } = await t.db.query<{ field: string; column_name: string; data_type: ColumnType }>(
        'select field, column_name, data_type from refdata.list_columns where list_key = $1 and replaced_at is null',
        [key],
      );
      for (const field of served) expect(rows.map((r) => r.field), `${key}.${field}`).toContain(field);
      for (const r of rows) expect(await typeOf(key, r.column_name), `${key}.${r.column_name}`).toBe(sqlType(r.data_type).replace('timestamptz', 'timestamp with time zone'));
      await expectServedValues(key);
    }
  });
});
