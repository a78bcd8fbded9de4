import { beforeAll, describe, expect, it } from 'vitest';
import { entriesAsOf } from '../../src/db/functions.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { syncSandbox, V2024 } from './fixture.ts';
import { listKeys } from '../../src/catalog/list-keys.ts';

type Row = Record<string, unknown>;

// refdata.<list>_as_of: the typed history of every list at a time, and what a time before the
// list's first sync reads.
describe('typed as-of functions', () => {
  const t = useTestDatabase();
  let sb: Sandbox;
  let beforeFirst: Date;
  let afterFirst: Date;
  let firstLength: unknown;

  const clock = async () => (await t.db.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]!.now;
  const asOf = async (key: string, at: Date, extend = false) =>
    (await t.db.query<Row>(`select * from refdata.${key}_as_of($1, null, null, $2) order by entry_key`, [at, extend])).rows;

  beforeAll(async () => {
    sb = await useSandbox();
    beforeFirst = await clock();
    await syncSandbox(t.db, sb);
    afterFirst = await clock();
    const first = sb.control.getEntries('equipment_types') as Array<{ machine_readable: string; length_ft: number }>;
    firstLength = first[0]!.length_ft;
    sb.control.modifyEntry('equipment_types', first[0]!.machine_readable, { length_ft: 99 });
    sb.control.addEntry('equipment_types', { id: 990, machine_readable: 'LATE_ONE', name: 'Added later', length_ft: 12, temperature_controlled: false });
    sb.control.addEntry('charge_codes', { code: 'ZLATE', description: 'Added later', category: 'other' }, { version: V2024 });
    await syncSandbox(t.db, sb, ['equipment_types', 'charge_codes']);
  });

  it('exists for every list and returns the typed columns of its history view, as they were at the time', async () => {
    const { rows: fns } = await t.db.query<{ proname: string }>(
      "select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace and n.nspname = 'refdata' where p.proname like '%\\_as\\_of' order by 1",
    );
    expect(fns.map((f) => f.proname)).toContain('equipment_types_as_of');
    // One per list (charge_codes_as_of among them) and the untyped entries_as_of.
    expect(fns.length).toBe(listKeys.length + 1);
    const then = await asOf('equipment_types', afterFirst);
    const key = (sb.control.getEntries('equipment_types')[0] as { machine_readable: string }).machine_readable;
    const row = then.find((r) => r.entry_key === key)!;
    expect(row.length_ft).toBe(firstLength);
    const { rows: cols } = await t.db.query('select pg_typeof(length_ft)::text as typeof_length from refdata.equipment_types_as_of(now()) limit 1');
    expect(cols[0]).toEqual({ typeof_length: 'bigint' });
    const now = await asOf('equipment_types', await clock());
    expect(now.find((r) => r.entry_key === key)!.length_ft).toBe(99);
    expect(now.map((r) => r.entry_key)).toContain('LATE_ONE');
    expect(then.map((r) => r.entry_key)).not.toContain('LATE_ONE');
    // The same rows as the history view read by hand.
    const { rows: byHand } = await t.db.query<Row>(
      'select * from refdata.equipment_types_history where valid_from <= $1 and (valid_to is null or valid_to > $1) order by entry_key',
      [afterFirst],
    );
    expect(then).toEqual(byHand);
  });

  it('before the first sync: strict by default (nothing), the first recorded versions with p_extend_back', async () => {
    expect(await asOf('equipment_types', beforeFirst)).toEqual([]);
    const extended = await asOf('equipment_types', beforeFirst, true);
    expect(extended.map((r) => r.entry_key)).toEqual((await asOf('equipment_types', afterFirst)).map((r) => r.entry_key));
    expect(extended.map((r) => r.entry_key)).not.toContain('LATE_ONE');
    const key = (sb.control.getEntries('equipment_types')[0] as { machine_readable: string }).machine_readable;
    expect(extended.find((r) => r.entry_key === key)!.length_ft).toBe(firstLength);
    // The untyped functions take the same argument.
    expect(await entriesAsOf(t.db, 'equipment_types', beforeFirst)).toEqual([]);
    const { rows: untyped } = await t.db.query('select * from refdata.entries_as_of($1, $2, null, null, true)', ['equipment_types', beforeFirst]);
    expect(untyped.length).toBe(extended.length);
    const { rows: cc } = await t.db.query<{ code: string }>('select code from refdata.charge_codes_as_of($1, $2, null, true)', [beforeFirst, V2024]);
    expect(cc.length).toBeGreaterThan(40);
    expect(cc.map((r) => r.code)).not.toContain('ZLATE');
    // Where the recorded history begins, per list, in SQL.
    const { rows: times } = await t.db.query<{ first_synced_at: Date }>(
      "select first_synced_at from refdata.list_sync_times where list_key = 'equipment_types' and environment = 'sandbox'",
    );
    expect(times[0]!.first_synced_at.getTime()).toBeGreaterThan(beforeFirst.getTime());
    expect(times[0]!.first_synced_at.getTime()).toBeLessThan(afterFirst.getTime());
  });

  it('refdata.<list>_diff gives each change with the versions before and after as typed rows, side by side', async () => {
    const key = (sb.control.getEntries('equipment_types')[0] as { machine_readable: string }).machine_readable;
    const { rows } = await t.db.query<Row>(
      `select entry_key, change, changed_fields, (before).length_ft as before_length, (after).length_ft as after_length, (after).name as after_name
       from refdata.equipment_types_diff($1, $2) order by entry_key`,
      [afterFirst, await clock()],
    );
    expect(rows).toEqual(
      [
        { entry_key: key, change: 'modified', changed_fields: ['length_ft'], before_length: firstLength, after_length: 99, after_name: expect.any(String) },
        { entry_key: 'LATE_ONE', change: 'added', changed_fields: null, before_length: null, after_length: 12, after_name: 'Added later' },
      ].sort((a, b) => (a.entry_key < b.entry_key ? -1 : 1)),
    );
    const { rows: cc } = await t.db.query<Row>('select change, (after).code as code, version from refdata.charge_codes_diff($1, now(), $2)', [
      afterFirst,
      V2024,
    ]);
    expect(cc).toEqual([{ change: 'added', code: 'ZLATE', version: V2024 }]);
  });

  it('is inlined: a LATERAL join of 100,000 facts reads entries through its index, never a scan per fact', async () => {
    await t.db.query('create table public.t_facts (id int, at timestamptz, code text)');
    await t.db.query(
      `insert into public.t_facts select i, $1::timestamptz + (i % 1000) * interval '1 second', (array['FLAT', 'REEF', 'VAN', 'NOPE'])[1 + i % 4]
       from generate_series(1, 100000) i`,
      [afterFirst],
    );
    await t.db.query('analyze public.t_facts');
    await t.db.query('analyze refdata.entries');
    const { rows } = await t.db.query<{ 'QUERY PLAN': string }>(
      `explain select f.id, x.length_ft from public.t_facts f
       cross join lateral refdata.equipment_types_as_of(f.at, '', 'sandbox') x where x.entry_key = f.code`,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).not.toMatch(/Function Scan/);
    expect(plan).toMatch(/Index (Only )?Scan using entries_\w+ on entries|Bitmap Index Scan on entries_\w+/);
    expect(plan).not.toMatch(/Seq Scan on entries/);
  });

  it('follows its history view when a column is added and when one changes type', async () => {
    sb.control.modifyEntry('equipment_types', 'LATE_ONE', { axles: 3 });
    await syncSandbox(t.db, sb, ['equipment_types']);
    const late = (await asOf('equipment_types', await clock())).find((r) => r.entry_key === 'LATE_ONE')!;
    expect(late.axles).toBe(3);
    for (const e of sb.control.getEntries('equipment_types') as Array<{ machine_readable: string }>) {
      sb.control.modifyEntry('equipment_types', e.machine_readable, { axles: `${e.machine_readable}-axles` });
    }
    await syncSandbox(t.db, sb, ['equipment_types']);
    const { rows } = await t.db.query<{ t: string }>('select pg_typeof(axles)::text as t from refdata.equipment_types_as_of(now()) limit 1');
    expect(rows[0]!.t).toBe('text');
    expect((await asOf('equipment_types', await clock())).find((r) => r.entry_key === 'LATE_ONE')!.axles).toBe('LATE_ONE-axles');
  });
});
