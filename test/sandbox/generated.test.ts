import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { SANDBOX_KEYED_ACCOUNT, sandboxAgent, sandboxRequest, useSandbox, type Sandbox } from '../helpers/sandbox.ts';

let sb: Sandbox;
const auth = { authorization: `APIkey ${SANDBOX_KEYED_ACCOUNT.apiKey}` };
beforeAll(async () => {
  sb = await useSandbox();
});

/** Counts entries while the body streams in: one `"item":` per NMFC entry, across chunk borders. */
async function countStreamed(path: string): Promise<{ entries: number; bytes: number; chunks: number }> {
  const res = await request(`${sb.url}${path}`, { headers: auth, dispatcher: sandboxAgent(sb) });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-length']).toBeUndefined();
  const needle = '"item":';
  let carry = '';
  let entries = 0;
  let bytes = 0;
  let chunks = 0;
  for await (const chunk of res.body) {
    const text = carry + (chunk as Buffer).toString('utf8');
    bytes += (chunk as Buffer).length;
    chunks++;
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) entries++;
    carry = text.slice(-(needle.length - 1));
  }
  return { entries, bytes, chunks };
}

describe('generated lists', () => {
  it('streams 100,000 NMFC entries as a bare array', async () => {
    sb.control.reset();
    sb.control.setGenerated('nmfc_codes', 100_000);
    sb.control.setPaging('nmfc_codes', 'array');
    const { entries, bytes, chunks } = await countStreamed('/v2/shipments/nmfc/');
    expect(entries).toBe(100_000);
    expect(chunks).toBeGreaterThan(1);
    expect(bytes).toBeGreaterThan(5_000_000);
  });

  it('pages 100,000 NMFC entries with next links, keys unique, matching getEntries', async () => {
    sb.control.reset();
    sb.control.setGenerated('nmfc_codes', 100_000);
    let url: string | null = '/v2/shipments/nmfc/?page-size=1000';
    const keys = new Set<string>();
    let pages = 0;
    while (url) {
      const page: { results: { item: string; sub: string }[]; next: string | null; total_count: number } = (
        await sandboxRequest(sb, url, { headers: auth })
      ).json();
      expect(page.total_count).toBe(100_000);
      for (const e of page.results) keys.add(`${e.item}|${e.sub}`);
      url = page.next;
      pages++;
    }
    expect(pages).toBe(100);
    expect(keys.size).toBe(100_000);
    expect(sb.control.getEntries('nmfc_codes')).toHaveLength(100_000);
  });

  it('is deterministic, and changeGenerated rewords every Nth description', async () => {
    sb.control.reset();
    sb.control.setGenerated('nmfc_codes', 1000);
    const a = sb.control.getEntries('nmfc_codes') as { description: string }[];
    sb.control.setGenerated('nmfc_codes', 1000);
    expect(sb.control.getEntries('nmfc_codes')).toEqual(a);
    sb.control.changeGenerated('nmfc_codes', { everyNth: 100 });
    const b = sb.control.getEntries('nmfc_codes') as { description: string }[];
    const changed = b.filter((e, i) => e.description !== a[i]?.description);
    expect(changed).toHaveLength(10);
    expect(b[99]?.description).not.toBe(a[99]?.description);
    expect(() => sb.control.changeGenerated('hazmat', { everyNth: 2 })).toThrow(/not generated/);
  });

  it('takes removals, changes and additions on top of generated entries', async () => {
    sb.control.reset();
    sb.control.setGenerated('nmfc_codes', 50);
    const all = sb.control.getEntries('nmfc_codes') as { item: string; sub: string; description: string }[];
    const third = all[3] as { item: string; sub: string };
    sb.control.removeEntry('nmfc_codes', `${third.item}|${third.sub}`);
    sb.control.removeEntry('nmfc_codes', '100000|');
    sb.control.modifyEntry('nmfc_codes', '100001|5', { description: 'patched' });
    sb.control.addEntry('nmfc_codes', { item: '999999', sub: '', description: 'Added' });
    const after = sb.control.getEntries('nmfc_codes') as { item: string; sub: string; description: string }[];
    expect(after).toHaveLength(49);
    expect(after.map((e) => `${e.item}|${e.sub}`)).not.toContain('100000|3');
    expect(after.find((e) => e.item === '100001' && e.sub === '5')?.description).toBe('patched');
    expect(after.at(-1)).toEqual({ item: '999999', sub: '', description: 'Added' });
    // Pages agree with getEntries across the removed positions.
    sb.control.setPaging('nmfc_codes', 'envelope');
    const served: unknown[] = [];
    for (let page = 1; page <= 5; page++) {
      served.push(...(await sandboxRequest(sb, `/v2/shipments/nmfc/?page-size=10&page=${page}`, { headers: auth })).json<{ results: unknown[] }>().results);
    }
    expect(served).toEqual(after);
  });

  it('generates other lists too, with their own key fields', () => {
    sb.control.reset();
    sb.control.setGenerated('equipment_types', 3);
    sb.control.setGenerated('accessorials', 3);
    expect((sb.control.getEntries('equipment_types') as { machine_readable: string }[]).map((e) => e.machine_readable)).toEqual([
      'GEN_0000000',
      'GEN_0000001',
      'GEN_0000002',
    ]);
    expect(sb.control.getEntries('accessorials')[0]).toMatchObject({
      id: expect.any(Number),
      code: 'G0000000',
      description: expect.any(String),
      is_charge_code: expect.any(Boolean),
    });
    sb.control.removeEntry('accessorials', 'G0000001');
    expect(sb.control.getEntries('accessorials')).toHaveLength(2);
  });
});
