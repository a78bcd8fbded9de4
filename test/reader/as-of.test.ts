import { beforeAll, describe, expect, it } from 'vitest';
import { entriesAsOf } from '../../src/db/functions.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { syncSandbox, V2024, V2025 } from './fixture.ts';

type Code = { code: string; description: string };
const codes = (sb: Sandbox, version: string) => (sb.control.getEntries('charge_codes', { version }) as Code[]).map((e) => [e.code, e.description]).sort();

describe('as-of reads', () => {
  const t = useTestDatabase();
  let sb: Sandbox;
  let before: string[][];
  let at: Date;

  beforeAll(async () => {
    sb = await useSandbox();
    await syncSandbox(t.db, sb, ['charge_codes', 'shipment_modes']);
    before = codes(sb, V2024);
    at = (await t.db.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]!.now;
    sb.control.modifyEntry('charge_codes', 'SOC', { description: 'Stop Off Charge (per stop)' }, { version: V2024 });
    sb.control.removeEntry('charge_codes', 'VOR', { version: V2024 });
    sb.control.addEntry('charge_codes', { code: 'ZZZ', description: 'Test Only', category: 'other' }, { version: V2024 });
    await syncSandbox(t.db, sb, ['charge_codes']);
  });

  it('entries_as_of(t) returns the list as it was at t, and as of now the new list', async () => {
    const then = await entriesAsOf(t.db, 'charge_codes', at, { variant: V2024 });
    expect(then.map((r) => [r.code, r.description]).sort()).toEqual(before);
    expect(then.find((r) => r.code === 'SOC')).toMatchObject({ description: 'Stop Off Charge', environment: 'sandbox', variant: V2024 });
    const now = await entriesAsOf(t.db, 'charge_codes', new Date(), { variant: V2024, environment: 'sandbox' });
    expect(now.map((r) => [r.code, r.description]).sort()).toEqual(codes(sb, V2024));
    expect(now.map((r) => r.code)).not.toContain('VOR');
    expect(now.map((r) => r.code)).toContain('ZZZ');
    expect(now.every((r) => r.valid_to === null)).toBe(true);
    // The closed versions carry the time they stopped being current.
    const soc = then.find((r) => r.code === 'SOC')!;
    expect(soc.valid_to!.getTime()).toBeGreaterThan(at.getTime());
  });

  it('before the first sync nothing existed; variants and environments narrow', async () => {
    expect(await entriesAsOf(t.db, 'charge_codes', new Date('2000-01-01T00:00:00Z'))).toEqual([]);
    const all = await entriesAsOf(t.db, 'charge_codes', at);
    expect(new Set(all.map((r) => r.variant))).toEqual(new Set([V2024, V2025]));
    expect(await entriesAsOf(t.db, 'charge_codes', at, { environment: 'production' })).toEqual([]);
    const modes = await entriesAsOf(t.db, 'shipment_modes', new Date());
    expect(modes.map((r) => r.code)).toContain('LTL');
  });

  it('charge_codes_as_of joins facts on the codes valid at each fact date (LATERAL)', async () => {
    const { rows } = await t.db.query<{ id: number; description: string | null }>(
      `with facts(id, charge_code, charged_at) as (
         values (1, 'SOC', $1::timestamptz), (2, 'SOC', now()), (3, 'VOR', $1::timestamptz), (4, 'VOR', now()), (5, 'ZZZ', $1::timestamptz)
       )
       select f.id, c.description
       from facts f
       left join lateral refdata.charge_codes_as_of(f.charged_at, $2, 'sandbox') c on c.code = f.charge_code
       order by f.id`,
      [at.toISOString(), V2024],
    );
    expect(rows).toEqual([
      { id: 1, description: 'Stop Off Charge' },
      { id: 2, description: 'Stop Off Charge (per stop)' },
      { id: 3, description: 'Vehicle Ordered Not Used' },
      { id: 4, description: null },
      { id: 5, description: null },
    ]);
    // The default version is 'unpinned', which this source does not keep.
    const { rows: unpinned } = await t.db.query('select * from refdata.charge_codes_as_of(now())');
    expect(unpinned).toEqual([]);
  });
});
