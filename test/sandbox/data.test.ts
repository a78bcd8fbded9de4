import { describe, expect, it } from 'vitest';
import { sandboxControlHttp, sandboxRequest, useLoggedInSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { listKeys } from '../../src/catalog/list-keys.ts';

let sb: Sandbox;
let auth: Record<string, string>;
useLoggedInSandbox((started, headers) => {
  sb = started;
  auth = headers;
});

const served = async <T = Record<string, unknown>>(path: string, headers: Record<string, string> = {}) => {
  const body = (await sandboxRequest(sb, path, { headers: { ...auth, ...headers } })).json<T[] | { results: T[] }>();
  return Array.isArray(body) ? body : body.results;
};

describe('data changes', () => {
  it('addEntry, modifyEntry, removeEntry by code', async () => {
    sb.control.addEntry('shipment_modes', { code: 'HOTSHOT', description: 'Hotshot', id: 99 });
    sb.control.modifyEntry('shipment_modes', 'LTL', { description: 'Less-Than-Truckload' });
    sb.control.removeEntry('shipment_modes', 'AIR');
    const modes = await served<{ code: string; description: string }>('/v2/shipments/shipment-modes/');
    expect(modes.map((m) => m.code)).toEqual(['LTL', 'FTL', 'VLTL', 'DRAYAGE', 'PARCEL', 'INTERMODAL', 'RAIL_CAR', 'FCL', 'LCL', 'HOTSHOT']);
    expect(modes[0]).toEqual({ code: 'LTL', description: 'Less-Than-Truckload', id: 1 });
    expect(() => sb.control.addEntry('shipment_modes', { code: 'LTL', description: 'dup' })).toThrow(/already/);
    expect(() => sb.control.removeEntry('shipment_modes', 'NOPE')).toThrow(/no entry/);
    expect(() => sb.control.addEntry('nope', { code: 'X' })).toThrow(/unknown list/);
  });

  it('uses machine_readable for equipment types and item|sub for NMFC', async () => {
    sb.control.removeEntry('equipment_types', 'DRY_VAN');
    sb.control.modifyEntry('nmfc_codes', '156600|3', { class: '999' });
    sb.control.removeEntry('nmfc_codes', '18810|');
    expect((sb.control.getEntries('equipment_types') as { machine_readable: string }[]).map((e) => e.machine_readable)).not.toContain('DRY_VAN');
    const nmfc = sb.control.getEntries('nmfc_codes') as { item: string; sub: string; class: string }[];
    expect(nmfc.find((e) => e.item === '156600' && e.sub === '3')?.class).toBe('999');
    expect(nmfc.find((e) => e.item === '18810')).toBeUndefined();
  });

  it('changes one variant: a charge-code version or a carrier', async () => {
    sb.control.removeEntry('charge_codes', 'SOC', { version: '2024-06-11' });
    expect(await served<{ code: string }>('/reference-data/charge-codes/?page-size=100', { 'x-service-version': '2024-06-11' })).not.toContainEqual(
      expect.objectContaining({ code: 'SOC' }),
    );
    expect(await served<{ code: string }>('/reference-data/charge-codes/?page-size=100')).toContainEqual(expect.objectContaining({ code: 'SOC' }));
    sb.control.addEntry('carrier_package_types', { code: 'UPS_NEW', description: 'New UPS box', carrier: 'ups' }, { carrier: 'ups' });
    expect(await served('/v2/quoting/ups/package-types/')).toContainEqual(expect.objectContaining({ code: 'UPS_NEW' }));
    expect(await served('/v2/quoting/fedex/package-types/')).not.toContainEqual(expect.objectContaining({ code: 'UPS_NEW' }));
    // Without a selector: the latest version, the first carrier (fedex).
    sb.control.modifyEntry('charge_codes', 'CLN', { description: 'Cleaning' });
    expect(
      (sb.control.getEntries('charge_codes', { version: '2025-09-01' }) as { code: string; description: string }[]).find((e) => e.code === 'CLN')?.description,
    ).toBe('Cleaning');
  });

  it('schema drift: addField puts a new field with one value on every entry of every variant', async () => {
    sb.control.addField('carrier_package_types', 'is_returnable', false);
    for (const carrier of ['fedex', 'ups']) {
      const entries = sb.control.getEntries('carrier_package_types', { carrier }) as Array<Record<string, unknown>>;
      expect(entries.length).toBeGreaterThan(0);
      for (const e of entries) expect(e.is_returnable).toBe(false);
    }
  });

  it('schema drift: renameField, removeField, retypeField on every variant', async () => {
    sb.control.renameField('accessorials', 'long_description', 'details');
    sb.control.removeField('accessorials', 'stop_type');
    sb.control.retypeField('accessorials', 'id');
    sb.control.retypeField('accessorials', 'is_charge_code');
    const [first] = await served<Record<string, unknown>>('/v2/shipments/accessorials/');
    expect(first).toEqual({ id: '101', code: 'APPTDEL', description: 'Appointment Delivery', details: expect.any(String), is_charge_code: 'true' });
    expect(Object.keys(first ?? {})).toEqual(['id', 'code', 'description', 'details', 'is_charge_code']);
    sb.control.retypeField('charge_codes', 'description');
    for (const version of sb.control.chargeCodeVersions()) {
      const [cc] = sb.control.getEntries('charge_codes', { version }) as { description: unknown }[];
      expect(cc?.description).toEqual({ text: expect.any(String) });
    }
  });

  it('setEntries empties or replaces a list; reset brings back the bundled data', async () => {
    const before = sb.control.getEntries('document_types');
    sb.control.setEntries('document_types', []);
    expect(await served('/v2/documents/document-types/')).toEqual([]);
    sb.control.setEntries('document_types', [{ code: 'ONLY', description: 'Only one' }]);
    expect(await served('/v2/documents/document-types/')).toEqual([{ code: 'ONLY', description: 'Only one' }]);
    sb.control.setPaging('document_types', 'envelope');
    sb.control.reset();
    expect(await served('/v2/documents/document-types/')).toEqual(before);
  });

  it('getEntries returns copies: changing them changes nothing served', () => {
    const entries = sb.control.getEntries('hazmat') as { description: string }[];
    if (entries[0]) entries[0].description = 'changed';
    expect((sb.control.getEntries('hazmat') as { description: string }[])[0]?.description).not.toBe('changed');
  });
});

describe('request log and counters', () => {
  it('records method, path, query, scheme and status; resetRequestLog empties it; control calls are counted, not logged', async () => {
    sb.control.resetRequestLog();
    const before = sb.requestCount();
    await sandboxRequest(sb, '/v2/shipments/nmfc/?page=2', { headers: auth });
    await sandboxRequest(sb, '/v2/shipments/nmfc');
    await sandboxControlHttp(sb, 'state');
    expect(sb.control.requestLog()).toEqual([
      { method: 'GET', path: '/v2/shipments/nmfc/', query: 'page=2', authScheme: 'token', status: 200 },
      { method: 'GET', path: '/v2/shipments/nmfc', query: '', authScheme: null, status: 404 },
    ]);
    expect(sb.requestCount()).toBe(before + 3);
    sb.control.resetRequestLog();
    expect(sb.control.requestLog()).toEqual([]);
  });
});

describe('control API over HTTP', () => {
  it('refuses a missing or wrong secret with 403', async () => {
    expect((await sandboxRequest(sb, '/__sandbox/state')).status).toBe(403);
    expect((await sandboxControlHttp(sb, 'clearFaults', {}, 'wrong')).status).toBe(403);
    expect((await sandboxRequest(sb, '/__sandbox/setLatency', { method: 'POST', body: '{"ms":1}' })).status).toBe(403);
    expect(sb.control.state().latencyMs).toBe(0);
  });

  it('GET /__sandbox/state returns the switches', async () => {
    sb.control.setFaults({ errorCount: 3 });
    const res = await sandboxRequest(sb, '/__sandbox/state', { headers: { 'x-sandbox-control': sb.controlSecret } });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({
      latencyMs: 0,
      faults: { errorCount: 3 },
      chargeCodeVersions: ['2024-06-11', '2025-09-01'],
      paging: { hazmat: { shape: 'array' } },
    });
  });

  it('reaches every switch with a JSON body', async () => {
    const ok = async (name: string, body: unknown = {}) => {
      const res = await sandboxControlHttp(sb, name, body);
      expect(res.status, `${name}: ${res.text}`).toBe(200);
      return res.json<{ ok: true; result?: unknown }>().result;
    };
    await ok('setLatency', { ms: 5 });
    await ok('setFaults', { errorCount: 1, paths: ['hazmat'] });
    expect((await sandboxRequest(sb, '/v2/shipments/hazmat/', { headers: auth })).status).toBe(500);
    await ok('clearFaults');
    await ok('setTokenLifetime', { requests: 100 });
    await ok('requireApiKey', { paths: ['hazmat'] });
    expect((await sandboxRequest(sb, '/v2/shipments/hazmat/', { headers: auth })).status).toBe(401);
    await ok('requireApiKey', { paths: [] });
    await ok('setPaging', { listKey: 'hazmat', shape: 'next', opts: { defaultPageSize: 5 } });
    await ok('addEntry', { listKey: 'hazmat', entry: { code: '10', description: 'Ten' } });
    await ok('modifyEntry', { listKey: 'hazmat', entryKey: '10', patch: { description: 'Ten!' } });
    await ok('removeEntry', { listKey: 'hazmat', entryKey: '1.1' });
    await ok('renameField', { listKey: 'hazmat', from: 'division', to: 'hazard_division' });
    await ok('removeField', { listKey: 'hazmat', field: 'hazard_class' });
    await ok('retypeField', { listKey: 'hazmat', field: 'description' });
    await ok('addField', { listKey: 'hazmat', field: 'is_toxic', value: true });
    await ok('setEntries', { listKey: 'charge_codes', version: '2024-06-11', entries: [{ code: 'A', description: 'A' }] });
    expect(await ok('getEntries', { listKey: 'charge_codes', version: '2024-06-11' })).toEqual([{ code: 'A', description: 'A' }]);
    await ok('setGenerated', { listKey: 'nmfc_codes', count: 10 });
    await ok('changeGenerated', { listKey: 'nmfc_codes', everyNth: 5 });
    expect(await ok('listKeys')).toEqual([...listKeys]);
    expect(await ok('chargeCodeVersions')).toEqual(['2024-06-11', '2025-09-01']);
    const page = (await sandboxRequest(sb, '/v2/shipments/hazmat/', { headers: auth })).json<{
      page_size: number;
      next: string;
      results: Record<string, unknown>[];
    }>();
    expect(page.page_size).toBe(5);
    expect(page.results[0]).toEqual({ code: '1.2', description: { text: 'Explosives with a projection hazard' }, hazard_division: '1.2', is_toxic: true });
    expect(await ok('requestLog')).toEqual(expect.any(Array));
    await ok('resetRequestLog');
    await ok('reset');
    expect(sb.control.state().latencyMs).toBe(0);
    expect(sb.control.getEntries('hazmat')).toHaveLength(20);
  });

  it('answers 400 to bad arguments and 404 to an unknown switch', async () => {
    const bad = await sandboxControlHttp(sb, 'addEntry', { listKey: 'nope', entry: {} });
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'invalid_request', detail: expect.stringMatching(/unknown list/) });
    expect((await sandboxControlHttp(sb, 'setLatency', { ms: 'slow' })).status).toBe(400);
    expect((await sandboxControlHttp(sb, 'setPaging', { listKey: 'hazmat', shape: 'cursor' })).status).toBe(400);
    expect((await sandboxControlHttp(sb, 'explode')).status).toBe(404);
  });
});
