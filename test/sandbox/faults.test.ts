import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { sandboxAgent, sandboxLogin, sandboxRequest, useLoggedInSandbox, useSandbox, type Sandbox } from '../helpers/sandbox.ts';

let sb: Sandbox;
let auth: Record<string, string>;
useLoggedInSandbox((started, headers) => {
  sb = started;
  auth = headers;
});

const get = (path: string, init: { signal?: AbortSignal } = {}) => sandboxRequest(sb, path, { headers: auth, ...init });

describe('latency', () => {
  it('is applied (from options or the switch) and the response still arrives', async () => {
    const slow = await useSandbox({ latencyMs: 30 });
    expect(slow.control.state().latencyMs).toBe(30);
    expect((await sandboxRequest(slow, '/v2/auth/me/')).status).toBe(401);
    sb.control.setLatency(40);
    expect(sb.control.state().latencyMs).toBe(40);
    expect((await get('/v2/shipments/hazmat/')).status).toBe(200);
    sb.control.reset();
    expect(sb.control.state().latencyMs).toBe(0);
  });
});

describe('status faults', () => {
  it('errorCount: the next N list requests answer 500, then the list is back', async () => {
    sb.control.setFaults({ errorCount: 2 });
    expect((await get('/v2/shipments/hazmat/')).status).toBe(500);
    const second = await get('/v2/shipments/accessorials/');
    expect(second.status).toBe(500);
    expect(second.json()).toMatchObject({ error: 'server_error' });
    expect((await get('/v2/shipments/hazmat/')).status).toBe(200);
  });

  it('does not spend a fault on a request without a credential, nor on /me by default', async () => {
    sb.control.setFaults({ errorCount: 1 });
    expect((await sandboxRequest(sb, '/v2/shipments/hazmat/')).status).toBe(401);
    expect((await get('/v2/auth/me/')).status).toBe(200);
    expect((await get('/v2/shipments/hazmat/')).status).toBe(500);
  });

  it('errorRate: 1 fails every list request, 0.5 some of them, deterministically', async () => {
    sb.control.setFaults({ errorRate: 1 });
    for (let i = 0; i < 3; i++) expect((await get('/v2/shipments/hazmat/')).status).toBe(500);
    const run = async () => {
      sb.control.clearFaults();
      sb.control.setFaults({ errorRate: 0.5 });
      const out: number[] = [];
      for (let i = 0; i < 30; i++) out.push((await get('/v2/shipments/hazmat/')).status);
      return out;
    };
    const a = await run();
    expect(a).toContain(500);
    expect(a).toContain(200);
    expect(await run()).toEqual(a);
  });

  it('rateLimit: 429 with the Retry-After header given (seconds or an HTTP-date)', async () => {
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: '2' } });
    const limited = await get('/v2/shipments/hazmat/');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('2');
    expect((await get('/v2/shipments/hazmat/')).status).toBe(200);
    const date = new Date(Date.now() + 5000).toUTCString();
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: date } });
    expect((await get('/v2/shipments/hazmat/')).headers['retry-after']).toBe(date);
  });

  it('html: 200 with a text/html page', async () => {
    sb.control.setFaults({ html: { count: 1 } });
    const res = await get('/v2/shipments/accessorials/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(/<html/i);
  });

  it('unauthorizedOnPage: 401 on that page only, count times', async () => {
    sb.control.setFaults({ unauthorizedOnPage: { page: 2, count: 1 } });
    expect((await get('/v2/shipments/nmfc/?page=1')).status).toBe(200);
    const refused = await get('/v2/shipments/nmfc/?page=2');
    expect(refused.status).toBe(401);
    expect(refused.text).toBe('Authorization Required');
    expect((await get('/v2/shipments/nmfc/?page=2')).status).toBe(200);
  });

  it('paths restricts faults to some lists, and may name the auth endpoints', async () => {
    sb.control.setFaults({ errorCount: 1, paths: ['hazmat'] });
    expect((await get('/v2/shipments/accessorials/')).status).toBe(200);
    expect((await get('/v2/shipments/hazmat/')).status).toBe(500);
    sb.control.clearFaults();
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: '1' }, paths: ['/v2/auth/token/'] });
    await expect(sandboxLogin(sb)).rejects.toThrow(/429/);
    await expect(sandboxLogin(sb)).resolves.toEqual(expect.any(String));
  });

  it('clearFaults removes every fault; setFaults merges; bad faults are refused', async () => {
    sb.control.setFaults({ errorCount: 5 });
    sb.control.setFaults({ html: { count: 1 } });
    expect(sb.control.state().faults).toMatchObject({ errorCount: 5, html: { count: 1 } });
    sb.control.clearFaults();
    expect(sb.control.state().faults).toEqual({});
    expect((await get('/v2/shipments/hazmat/')).status).toBe(200);
    expect(() => sb.control.setFaults({ errorRate: 2 })).toThrow(/errorRate/);
    expect(() => sb.control.setFaults({ duplicateKey: { list: 'hazmat', mode: 'odd' as 'identical' } })).toThrow(/mode/);
  });
});

describe('body faults', () => {
  it('truncate: a complete 200 response whose JSON is cut', async () => {
    sb.control.setFaults({ truncate: { count: 1 } });
    const res = await get('/v2/shipments/accessorials/');
    expect(res.status).toBe(200);
    expect(res.text.length).toBeGreaterThan(0);
    expect(() => JSON.parse(res.text)).toThrow();
    const next = await get('/v2/shipments/accessorials/');
    expect(() => JSON.parse(next.text)).not.toThrow();
  });

  it('truncate cuts a large streamed body too', async () => {
    sb.control.setGenerated('nmfc_codes', 20_000);
    sb.control.setPaging('nmfc_codes', 'array');
    sb.control.setFaults({ truncate: { count: 1 } });
    const res = await get('/v2/shipments/nmfc/');
    expect(res.status).toBe(200);
    expect(() => JSON.parse(res.text)).toThrow();
  });

  it('stallHeaders: no answer at all, so a client-side timeout fires; the next request is served', async () => {
    sb.control.setFaults({ stallHeaders: { count: 1 } });
    await expect(get('/v2/shipments/hazmat/', { signal: AbortSignal.timeout(300) })).rejects.toThrow(/abort|timeout/i);
    expect((await get('/v2/shipments/hazmat/')).status).toBe(200);
  });

  it('stallBody: status and part of the body, then nothing: a client-side timeout fires', async () => {
    sb.control.setFaults({ stallBody: { count: 1 } });
    const res = await request(`${sb.url}/v2/shipments/accessorials/`, {
      headers: auth,
      dispatcher: sandboxAgent(sb),
      signal: AbortSignal.timeout(400),
    });
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow(/abort|timeout/i);
    expect(sb.control.requestLog().at(-1)).toMatchObject({ path: '/v2/shipments/accessorials/', status: 200 });
  });

  it('resetBody: part of the body, then the connection is destroyed', async () => {
    sb.control.setFaults({ resetBody: { count: 1 } });
    const res = await request(`${sb.url}/v2/shipments/accessorials/`, { headers: auth, dispatcher: sandboxAgent(sb) });
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow();
    expect((await get('/v2/shipments/accessorials/')).status).toBe(200);
  });
});

describe('list faults', () => {
  const keysOf = (entries: { code: string }[]) => entries.map((e) => e.code);

  it('duplicateKey identical: one key served twice with the same payload', async () => {
    sb.control.setFaults({ duplicateKey: { list: 'hazmat', mode: 'identical' } });
    const entries = (await get('/v2/shipments/hazmat/')).json<{ code: string; description: string }[]>();
    const codes = keysOf(entries);
    const dup = codes.find((c, i) => codes.indexOf(c) !== i);
    expect(dup).toBeDefined();
    const copies = entries.filter((e) => e.code === dup);
    expect(copies[0]).toEqual(copies[1]);
  });

  it('duplicateKey conflicting: one key served twice with different payloads, also across pages', async () => {
    sb.control.setFaults({ duplicateKey: { list: 'accessorials', mode: 'conflicting' } });
    const p1 = (await get('/v2/shipments/accessorials/?page-size=30')).json<{ results: { code: string; description: string }[]; total_count: number }>();
    const p2 = (await get('/v2/shipments/accessorials/?page-size=30&page=2')).json<{ results: { code: string; description: string }[] }>();
    const entries = [...p1.results, ...p2.results];
    expect(entries.length).toBe(p1.total_count);
    const codes = keysOf(entries);
    const dup = codes.find((c, i) => codes.indexOf(c) !== i);
    const copies = entries.filter((e) => e.code === dup);
    expect(copies).toHaveLength(2);
    expect(copies[0]?.description).not.toBe(copies[1]?.description);
  });

  it('nextLoop: the next link points back at the same page', async () => {
    sb.control.setFaults({ nextLoop: { list: 'nmfc_codes' } });
    const page = (await get('/v2/shipments/nmfc/?page=2')).json<{ next: string }>();
    expect(page.next).toBe(`${sb.url}/v2/shipments/nmfc/?page=2`);
  });

  it('endlessPages: every page claims another, with new entries', async () => {
    sb.control.setFaults({ endlessPages: { list: 'shipment_modes' } });
    let url: string | null = '/v2/shipments/shipment-modes/?page-size=4';
    const seen = new Set<string>();
    for (let i = 0; i < 12 && url; i++) {
      const page: { next: string | null; total_pages: number; results: { code: string }[] } = (await get(url)).json();
      expect(page.next).not.toBeNull();
      expect(page.total_pages).toBeGreaterThan(i + 1);
      expect(page.results).toHaveLength(4);
      for (const e of page.results) seen.add(e.code);
      url = page.next;
    }
    expect(seen.size).toBe(48);
  });

  it('foreignNext: the next link points at another origin', async () => {
    sb.control.setFaults({ foreignNext: { list: 'charge_line_item_categories', url: 'https://attacker.example/steal/?page=2' } });
    const page = (await get('/v2/shipments/charge-line-item-categories/?page-size=5')).json<{ next: string }>();
    expect(page.next).toBe('https://attacker.example/steal/?page=2');
  });

  it('hugeBody: valid JSON of at least the given size, streamed without a length', async () => {
    sb.control.setFaults({ hugeBody: { list: 'hazmat', bytes: 3_000_000 } });
    const res = await request(`${sb.url}/v2/shipments/hazmat/`, { headers: auth, dispatcher: sandboxAgent(sb) });
    expect(res.headers['content-length']).toBeUndefined();
    let bytes = 0;
    const parts: Buffer[] = [];
    for await (const chunk of res.body) {
      bytes += (chunk as Buffer).length;
      parts.push(chunk as Buffer);
    }
    expect(bytes).toBeGreaterThanOrEqual(3_000_000);
    const entries = JSON.parse(Buffer.concat(parts).toString()) as unknown[];
    expect(entries.length).toBe(sb.control.getEntries('hazmat').length + 1);
  });

  it('endlessBody: the list entries go on past the list for as long as the client reads', async () => {
    sb.control.setFaults({ endlessBody: { list: 'hazmat' } });
    const res = await request(`${sb.url}/v2/shipments/hazmat/`, { headers: auth, dispatcher: sandboxAgent(sb) });
    let text = '';
    for await (const chunk of res.body) {
      text += (chunk as Buffer).toString();
      if (text.length > 2_000_000) break;
    }
    // Far more entries than the list has, and still no end to the array.
    const entries = text.split('},{').length;
    expect(entries).toBeGreaterThan(10 * sb.control.getEntries('hazmat').length);
    expect(text.trimEnd().endsWith(']')).toBe(false);
    sb.control.clearFaults();
  });

  it('drip: status and headers at once, then the body a byte at a time', async () => {
    sb.control.setFaults({ drip: { list: 'hazmat', intervalMs: 20 } });
    const res = await request(`${sb.url}/v2/shipments/hazmat/`, { headers: auth, dispatcher: sandboxAgent(sb) });
    expect(res.statusCode).toBe(200);
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      if (Buffer.concat(chunks).length >= 30) break;
    }
    // One byte per write (a busy reader may find two or three together), the start of the real body.
    expect(chunks.length).toBeGreaterThanOrEqual(10);
    expect(Buffer.concat(chunks).toString()).toMatch(/^\[\{/);
    expect(() => sb.control.setFaults({ drip: { list: 'hazmat', intervalMs: 0 } })).toThrow(/drip.intervalMs must be a number above 0/);
    sb.control.clearFaults();
  });

  it('badValue: the first entry of page 1 serves the field as the JSON text of the case, escapes as served', async () => {
    sb.control.setFaults({ badValue: { list: 'shipment_modes', kind: 'nul', field: 'description' } });
    const first = await get('/v2/shipments/shipment-modes/');
    expect(first.text).toContain('"description":"before\\u0000after"}');
    expect(first.json<{ results: { description: string }[] }>().results[0]!.description).toBe('before\u0000after');
    const second = await get('/v2/shipments/shipment-modes/?page-size=1&page=2');
    expect(second.status).toBe(200);
    expect(second.text).not.toContain('\\u0000');
    sb.control.setFaults({ badValue: { list: 'shipment_modes', kind: 'bigNumbers' } });
    expect((await get('/v2/shipments/shipment-modes/')).text).toContain('"big":12345678901234567891,');
    sb.control.setFaults({ badValue: { list: 'shipment_modes', kind: 'deep' } });
    expect((await get('/v2/shipments/shipment-modes/')).text).toContain(`"remark":${'['.repeat(50_000)}]`);
    expect(() => sb.control.setFaults({ badValue: { list: 'shipment_modes', kind: 'nope' as 'nul' } })).toThrow(/kind must be one of nul, surrogate/);
    expect(() => sb.control.setFaults({ badValue: { list: 'shipment_modes' } })).toThrow(/needs a kind or a json text/);
    sb.control.clearFaults();
  });
});
