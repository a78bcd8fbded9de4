import { describe, expect, it } from 'vitest';
import { catalog } from '../../src/catalog/catalog.ts';
import { listKeys } from '../../src/catalog/list-keys.ts';
import { SANDBOX_CARRIERS, listPath, sandboxLists, type PagingShape } from '../../src/sandbox/index.ts';
import { SANDBOX_KEYED_ACCOUNT, sandboxRequest, useLoggedInSandbox, useSandbox, type Sandbox } from '../helpers/sandbox.ts';

const bareArray = ['location_types', 'document_types', 'vendor_poc_roles', 'shipment_rep_roles', 'hazmat', 'piece_types'];
const withNext = ['nmfc_codes', 'charge_line_item_categories'];

/** Every (list, variant) the sandbox serves, with its request path. */
const targets = sandboxLists.flatMap(
  (l): Array<{ key: string; path: string; variant: { carrier?: string } }> =>
    l.key === 'carrier_package_types'
      ? SANDBOX_CARRIERS.map((carrier) => ({ key: l.key, path: listPath(l, carrier), variant: { carrier } }))
      : [{ key: l.key, path: l.path, variant: {} }],
);

let sb: Sandbox;
let auth: Record<string, string>;
useLoggedInSandbox((started, headers) => {
  sb = started;
  auth = headers;
});

async function get(path: string, headers: Record<string, string> = auth) {
  return sandboxRequest(sb, path, { headers });
}

/** Reads a list the way a client would: bare array, or pages by number, or by `next`. */
async function fetchAll(path: string, pageSize: number): Promise<{ entries: unknown[]; requests: number }> {
  const first = await get(`${path}?page-size=${pageSize}`);
  expect(first.status).toBe(200);
  const body = first.json<unknown>();
  if (Array.isArray(body)) return { entries: body, requests: 1 };
  const entries: unknown[] = [];
  let page = body as { results: unknown[]; total_pages: number; total_count: number; page_size: number; next?: string | null };
  let requests = 1;
  expect(page.page_size).toBe(pageSize);
  const totalCount = page.total_count;
  for (;;) {
    entries.push(...page.results);
    let nextUrl: string | null;
    if ('next' in page) nextUrl = page.next ?? null;
    else nextUrl = requests < page.total_pages ? `${path}?page-size=${pageSize}&page=${requests + 1}` : null;
    if (!nextUrl) break;
    const res = await get(nextUrl);
    expect(res.status).toBe(200);
    page = res.json();
    requests++;
  }
  expect(entries.length).toBe(totalCount);
  return { entries, requests };
}

describe('reference lists', () => {
  it("serves every list of the catalog, and only those, at the path the client's catalog asks for", () => {
    expect(sb.control.listKeys()).toEqual([...listKeys]);
    expect(sandboxLists.map((l) => [l.key, l.path])).toEqual(catalog.map((l) => [l.key, `${l.basePath}${l.path}`]));
  });

  it.each(targets)('$path answers in its default shape with realistic entries', async ({ key, path, variant }) => {
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    const body = res.json<unknown>();
    let entries: Record<string, unknown>[];
    if (bareArray.includes(key)) {
      expect(Array.isArray(body)).toBe(true);
      entries = body as Record<string, unknown>[];
    } else {
      const env = body as Record<string, unknown>;
      expect(env).toMatchObject({ total_count: expect.any(Number), total_pages: expect.any(Number), page_size: 50 });
      expect('next' in env).toBe(withNext.includes(key));
      entries = env.results as Record<string, unknown>[];
      expect(entries.length).toBe(Math.min(50, env.total_count as number));
    }
    const all = sb.control.getEntries(key, variant) as Record<string, unknown>[];
    expect(entries).toEqual(all.slice(0, 50));
    if (key !== 'nmfc_codes') expect(all.length).toBeGreaterThanOrEqual(10);
    if (key !== 'nmfc_codes') expect(all.length).toBeLessThanOrEqual(60);
    for (const e of all) {
      if (key === 'equipment_types') {
        expect(e).toMatchObject({ id: expect.any(Number), machine_readable: expect.any(String), name: expect.any(String) });
      } else if (key === 'nmfc_codes') {
        expect(e).toMatchObject({ item: expect.stringMatching(/^\d+$/), sub: expect.stringMatching(/^\d*$/), description: expect.any(String) });
      } else {
        expect(e).toMatchObject({ code: expect.any(String), description: expect.any(String) });
      }
    }
  });

  it('has the entry shapes other modules rely on', () => {
    const acc = sb.control.getEntries('accessorials') as Record<string, unknown>[];
    expect(acc[0]).toMatchObject({
      id: expect.any(Number),
      code: expect.any(String),
      description: expect.any(String),
      long_description: expect.any(String),
      is_charge_code: expect.any(Boolean),
    });
    expect((sb.control.getEntries('shipment_modes') as { code: string }[]).map((e) => e.code)).toEqual([
      'LTL',
      'FTL',
      'VLTL',
      'DRAYAGE',
      'PARCEL',
      'INTERMODAL',
      'RAIL_CAR',
      'AIR',
      'FCL',
      'LCL',
    ]);
    const hazmat = (sb.control.getEntries('hazmat') as { code: string }[]).map((e) => e.code);
    expect(hazmat).toEqual(expect.arrayContaining(['1.1', '2.3', '3', '9']));
    const charge = (sb.control.getEntries('charge_codes') as { code: string }[]).map((e) => e.code);
    expect(charge).toEqual(expect.arrayContaining(['SOC', 'CLN', 'VOR', 'LFT', 'RES', 'INS', 'HAZ', 'DET']));
    expect(charge.length).toBeGreaterThanOrEqual(30);
    expect((sb.control.getEntries('equipment_types') as { machine_readable: string; name: string }[])[0]).toMatchObject({
      machine_readable: 'DRY_VAN',
      name: 'Dry Van',
    });
    const nmfc = sb.control.getEntries('nmfc_codes') as { item: string; sub: string }[];
    expect(nmfc.length).toBeGreaterThanOrEqual(200);
    expect(nmfc).toEqual(expect.arrayContaining([expect.objectContaining({ item: '156600', sub: '3' }), expect.objectContaining({ sub: '' })]));
  });

  for (const shape of ['array', 'envelope', 'next'] as PagingShape[]) {
    it.each(targets)(`$path read whole in the '${shape}' shape matches getEntries`, async ({ key, path, variant }) => {
      sb.control.setPaging(key, shape);
      const { entries, requests } = await fetchAll(path, 7);
      const expected = sb.control.getEntries(key, variant);
      expect(entries).toEqual(expected);
      expect(requests).toBe(shape === 'array' ? 1 : Math.ceil(expected.length / 7));
    });
  }

  it('answers 404 without the trailing slash, for unknown paths and unknown carriers', async () => {
    for (const path of [
      '/v2/shipments/accessorials',
      '/reference-data/charge-codes',
      '/v2/reference-data/charge-codes/',
      '/shipments/accessorials/',
      '/v2/nope/',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
    }
    const carrier = await get('/v2/quoting/tnt/package-types/');
    expect(carrier.status).toBe(404);
    expect(carrier.json()).toEqual({ detail: 'Not found.' });
  });

  it('answers 401 Authorization Required on every list without a credential', async () => {
    for (const { path } of targets) {
      const res = await sandboxRequest(sb, path);
      expect(res.status, path).toBe(401);
      expect(res.text).toBe('Authorization Required');
    }
  });

  it('pages: 1-based, default 50, capped at 1000, 404 Invalid page past the end or for a bad page', async () => {
    sb.control.setGenerated('nmfc_codes', 2500);
    const p1 = (await get('/v2/shipments/nmfc/')).json<{ results: unknown[]; total_pages: number; page_size: number; previous: string | null; next: string }>();
    expect(p1.page_size).toBe(50);
    expect(p1.total_pages).toBe(50);
    expect(p1.previous).toBeNull();
    expect(p1.next).toBe(`${sb.url}/v2/shipments/nmfc/?page=2`);
    const big = (await get('/v2/shipments/nmfc/?page-size=5000')).json<{ results: unknown[]; page_size: number; total_pages: number }>();
    expect(big.page_size).toBe(1000);
    expect(big.results.length).toBe(1000);
    expect(big.total_pages).toBe(3);
    const last = (await get('/v2/shipments/nmfc/?page-size=1000&page=3')).json<{ results: unknown[]; next: string | null; previous: string }>();
    expect(last.results.length).toBe(500);
    expect(last.next).toBeNull();
    expect(last.previous).toBe(`${sb.url}/v2/shipments/nmfc/?page-size=1000&page=2`);
    for (const q of ['page=4&page-size=1000', 'page=0', 'page=abc', 'page=-1']) {
      const res = await get(`/v2/shipments/nmfc/?${q}`);
      expect(res.status, q).toBe(404);
      expect(res.json()).toEqual({ detail: 'Invalid page.' });
    }
    // A bad page size falls back to the default.
    expect((await get('/v2/shipments/nmfc/?page-size=zero')).json<{ page_size: number }>().page_size).toBe(50);
  });

  it('setPaging takes a default and a maximum page size', async () => {
    sb.control.setPaging('accessorials', 'envelope', { defaultPageSize: 10, maxPageSize: 20 });
    expect((await get('/v2/shipments/accessorials/')).json<{ page_size: number }>().page_size).toBe(10);
    expect((await get('/v2/shipments/accessorials/?page-size=100')).json<{ page_size: number }>().page_size).toBe(20);
  });

  it('an empty list is one empty page, or an empty array', async () => {
    sb.control.setEntries('shipment_modes', []);
    expect((await get('/v2/shipments/shipment-modes/')).json()).toEqual({ total_count: 0, total_pages: 1, page_size: 50, results: [] });
    sb.control.setEntries('hazmat', []);
    expect((await get('/v2/shipments/hazmat/')).json()).toEqual([]);
  });

  it('answers HEAD without a body and refuses other methods with 405', async () => {
    const head = await sandboxRequest(sb, '/v2/shipments/accessorials/', { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const post = await sandboxRequest(sb, '/v2/shipments/accessorials/', { method: 'POST', headers: auth, body: '{}' });
    expect(post.status).toBe(405);
  });
});

describe('charge code versions', () => {
  const path = '/reference-data/charge-codes/';
  const codes = (res: { json<T>(): T }) => res.json<{ results: { code: string }[] }>().results.map((e) => e.code);

  it('has two dated versions; the later adds, removes and rewords a few codes', () => {
    expect(sb.control.chargeCodeVersions()).toEqual(['2024-06-11', '2025-09-01']);
    const a = sb.control.getEntries('charge_codes', { version: '2024-06-11' }) as { code: string; description: string }[];
    const b = sb.control.getEntries('charge_codes', { version: '2025-09-01' }) as { code: string; description: string }[];
    const inA = new Map(a.map((e) => [e.code, e.description]));
    const inB = new Map(b.map((e) => [e.code, e.description]));
    expect([...inB.keys()].filter((c) => !inA.has(c)).length).toBeGreaterThanOrEqual(2);
    expect([...inA.keys()].filter((c) => !inB.has(c)).length).toBeGreaterThanOrEqual(2);
    expect([...inA].filter(([c, d]) => inB.has(c) && inB.get(c) !== d).length).toBeGreaterThanOrEqual(2);
  });

  it('serves the latest version without a header, and says which', async () => {
    const res = await get(path);
    expect(res.headers['x-service-version']).toBe('2025-09-01');
    expect(codes(res)).toEqual((sb.control.getEntries('charge_codes', { version: '2025-09-01' }) as { code: string }[]).map((e) => e.code));
  });

  it('X-Service-Version chooses the version and overrides the account setting', async () => {
    const res = await get(path, { ...auth, 'x-service-version': '2024-06-11' });
    expect(res.headers['x-service-version']).toBe('2024-06-11');
    expect(codes(res)).toContain('TON');
    const pinned = await useSandbox({ accounts: [{ ...SANDBOX_KEYED_ACCOUNT, chargeCodeVersion: '2024-06-11' }] });
    const keyAuth = { authorization: `APIkey ${SANDBOX_KEYED_ACCOUNT.apiKey}` };
    const byAccount = await sandboxRequest(pinned, path, { headers: keyAuth });
    expect(byAccount.headers['x-service-version']).toBe('2024-06-11');
    const byHeader = await sandboxRequest(pinned, path, { headers: { ...keyAuth, 'x-service-version': '2025-09-01' } });
    expect(byHeader.headers['x-service-version']).toBe('2025-09-01');
  });

  it('answers 400 invalid_version to an unknown version', async () => {
    const res = await get(path, { ...auth, 'x-service-version': '2023-01-01' });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_version', detail: "Unknown service version '2023-01-01'" });
  });

  it('a new version can be published with setEntries, and becomes the latest', async () => {
    sb.control.setEntries('charge_codes', [{ code: 'NEW', description: 'New Code', category: 'other' }], { version: '2026-01-15' });
    expect(sb.control.chargeCodeVersions()).toEqual(['2024-06-11', '2025-09-01', '2026-01-15']);
    const res = await get(path);
    expect(res.headers['x-service-version']).toBe('2026-01-15');
    expect(codes(res)).toEqual(['NEW']);
  });
});
