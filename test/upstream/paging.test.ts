import { describe, expect, it } from 'vitest';
import { catalog } from '../../src/catalog/catalog.ts';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { HttpStatusError, OriginError, PagingError, ProtocolError, UpstreamClient } from '../../src/upstream/index.ts';
import { client, collect, failure, fast, json, useResetSandbox, tinyServer, type TinyServer } from './fixtures.ts';

let sb: Sandbox;
useResetSandbox((started) => (sb = started));

const shapes = ['array', 'envelope', 'next'] as const;

describe('every catalog list, whole, in every paging shape', () => {
  it.each(shapes)('shape %s', async (shape) => {
    const c = client(sb, { pageSize: 7 });
    try {
      for (const def of catalog) {
        sb.control.setPaging(def.key, shape);
        const variants: Array<{ path: string; serviceVersion?: string; selector?: { version?: string; carrier?: string } }> = [];
        if (def.variants === 'carrier') {
          for (const carrier of ['fedex', 'ups', 'usps', 'dhl']) variants.push({ path: def.path.replace('{carrier}', carrier), selector: { carrier } });
        } else if (def.variants === 'charge_code_version') {
          variants.push({ path: def.path });
          for (const version of sb.control.chargeCodeVersions()) variants.push({ path: def.path, serviceVersion: version, selector: { version } });
        } else {
          variants.push({ path: def.path });
        }
        for (const v of variants) {
          const request = { basePath: def.basePath, path: v.path, ...(v.serviceVersion ? { serviceVersion: v.serviceVersion } : {}) };
          const got = await collect(c.pages(request));
          const want = sb.control.getEntries(def.key, v.selector);
          expect(want.length, `${def.key} ${JSON.stringify(v.selector ?? {})}`).toBeGreaterThan(0);
          expect(got, `${def.key} ${shape} ${JSON.stringify(v.selector ?? {})}`).toEqual(want);
        }
      }
      if (shape !== 'array') {
        // Small pages really were paged.
        expect(sb.control.requestLog().some((r) => /(^|&)page=2(&|$)/.test(r.query))).toBe(true);
      }
    } finally {
      await c.close();
    }
  });

  it('streams a large list page by page (pages of page-size, never the whole list at once)', async () => {
    sb.control.setGenerated('nmfc_codes', 5000);
    sb.control.setPaging('nmfc_codes', 'envelope');
    const c = client(sb, { pageSize: 1000 });
    try {
      const sizes: number[] = [];
      for await (const batch of c.pages({ basePath: '/v2', path: '/shipments/nmfc/' })) sizes.push(batch.entries.length);
      expect(sizes).toEqual([1000, 1000, 1000, 1000, 1000]);
    } finally {
      await c.close();
    }
  });
});

describe('charge code versions', () => {
  it('a pinned version is sent as X-Service-Version; unpinned sends none', async () => {
    const c = client(sb);
    try {
      const [older, newer] = sb.control.chargeCodeVersions();
      const pinned = await collect(c.pages({ basePath: '', path: '/reference-data/charge-codes/', serviceVersion: older! }));
      expect(pinned).toEqual(sb.control.getEntries('charge_codes', { version: older! }));
      const unpinned = await collect(c.pages({ basePath: '', path: '/reference-data/charge-codes/' }));
      expect(unpinned).toEqual(sb.control.getEntries('charge_codes', { version: newer! }));
      expect(pinned).not.toEqual(unpinned);
    } finally {
      await c.close();
    }
  });

  it('an unknown version is a non-retryable error naming the version', async () => {
    const c = client(sb);
    try {
      const err = await failure(collect(c.pages({ basePath: '', path: '/reference-data/charge-codes/', serviceVersion: '2099-01-01' })));
      expect(err).toBeInstanceOf(HttpStatusError);
      expect(err).toMatchObject({ status: 400, retryable: false });
      expect(err.message).toContain("charge-code version '2099-01-01'");
    } finally {
      await c.close();
    }
  });
});

describe('paging that cannot be trusted', () => {
  it('a next link back to the same page is a loop', async () => {
    sb.control.setPaging('nmfc_codes', 'next');
    sb.control.setFaults({ nextLoop: { list: 'nmfc_codes' } });
    const c = client(sb, { pageSize: 10 });
    try {
      const err = await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/nmfc/' })));
      expect(err).toBeInstanceOf(PagingError);
      expect(err.code).toBe('paging');
      expect(err.message).toMatch(/leads back to page \d+; paging loop refused/);
      expect(sb.control.requestLog().filter((r) => r.path === '/v2/shipments/nmfc/').length).toBeLessThanOrEqual(2);
    } finally {
      await c.close();
    }
  });

  it.each(['envelope', 'next'] as const)('endless pages (%s) stop at maxPages', async (shape) => {
    sb.control.setPaging('hazmat', shape);
    sb.control.setFaults({ endlessPages: { list: 'hazmat' } });
    const c = client(sb, { pageSize: 5, maxPages: 30 });
    try {
      const err = await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/hazmat/' })));
      expect(err).toBeInstanceOf(PagingError);
      expect(sb.control.requestLog().filter((r) => r.path === '/v2/shipments/hazmat/').length).toBeLessThanOrEqual(30);
    } finally {
      await c.close();
    }
  });

  it('a next link to another origin is refused before a byte is sent there', async () => {
    let foreign: TinyServer | undefined;
    foreign = await tinyServer((_req, res) => json(res, 200, []));
    const seen = new Set<string>();
    sb.control.setPaging('hazmat', 'next');
    sb.control.setFaults({ foreignNext: { list: 'hazmat', url: `${foreign.url}/v2/shipments/hazmat/?page=2` } });
    const c = client(sb, { pageSize: 3, credentials: { email: 'keyed@sandbox.test', password: 'keyed-password', apiKeyScheme: 'apikey' } });
    try {
      const err = await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/hazmat/' })));
      expect(err).toBeInstanceOf(OriginError);
      expect(err.message).toContain(`points to another origin (${foreign.url})`);
      expect(err.retryable).toBe(false);
      expect(foreign.connections()).toBe(0);
      expect(foreign.requests).toHaveLength(0);
      for (const r of foreign.requests) seen.add(String(r.headers.authorization));
      expect(seen.size).toBe(0);
    } finally {
      await c.close();
      await foreign.close();
    }
  });

  it('a next link to another scheme or with user info is refused', async () => {
    for (const next of [`${sb.url.replace('https:', 'http:')}/v2/x/`, `${sb.url.replace('https://', 'https://user:pw@')}/v2/x/`]) {
      const server = await tinyServer((_req, res) => json(res, 200, { results: [{ code: 'A' }], next }));
      const c = new UpstreamClient({
        baseUrl: server.url,
        environment: 't',
        credentials: { apiKey: 'k-0000', apiKeyScheme: 'apikey' },
        ca: server.caPem,
        ...fast,
      });
      try {
        const err = await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/hazmat/' })));
        expect(err).toBeInstanceOf(OriginError);
        expect(server.requests).toHaveLength(1);
      } finally {
        await c.close();
        await server.close();
      }
    }
  });

  it('entries that do not add up to total_count fail the list', async () => {
    const server = await tinyServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'https://x').searchParams.get('page'));
      const results = page === 1 ? [{ code: 'A' }, { code: 'B' }] : [{ code: 'C' }];
      json(res, 200, { results, total_count: 4, total_pages: 2, page_size: 2 });
    });
    const c = new UpstreamClient({
      baseUrl: server.url,
      environment: 't',
      credentials: { apiKey: 'k-0000', apiKeyScheme: 'apikey' },
      ca: server.caPem,
      pageSize: 2,
      ...fast,
    });
    try {
      const err = await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/nmfc/' })));
      expect(err).toBeInstanceOf(PagingError);
      expect(err.message).toBe('GET /v2/shipments/nmfc/ page 2: expected 4 entries (total_count) but got 3');
      expect(server.requests.map((r) => r.url)).toEqual(['/v2/shipments/nmfc/?page=1&page-size=2', '/v2/shipments/nmfc/?page=2&page-size=2']);
    } finally {
      await c.close();
      await server.close();
    }
  });

  it('a Content-Length over the bytes-per-list limit is refused before the body is read', async () => {
    const big = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ code: `C${i}`, description: 'x'.repeat(20) })));
    const server = await tinyServer((_req, res) => json(res, 200, big));
    const c = new UpstreamClient({
      baseUrl: server.url,
      environment: 't',
      credentials: { apiKey: 'k-0000', apiKeyScheme: 'apikey' },
      ca: server.caPem,
      listLimits: { maxListBytes: 1000 },
      ...fast,
    });
    try {
      const err = await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/hazmat/' })));
      expect(err.code).toBe('size');
      expect(err.message).toBe(
        `GET /v2/shipments/hazmat/ page 1: the list's answers exceed 1000 bytes in all (Content-Length ${Buffer.byteLength(big)}), the limit of REFSYNC_MAX_LIST_BYTES; refused`,
      );
    } finally {
      await c.close();
      await server.close();
    }
  });

  it('a __proto__ key is refused; a 3xx is not followed', async () => {
    const server = await tinyServer((req, res) => {
      if (req.url?.startsWith('/v2/proto/')) {
        json(res, 200, '[{"code":"A","__proto__":{"polluted":true}}]');
      } else if (req.url?.startsWith('/v2/ctor/')) {
        json(res, 200, '{"results":[{"code":"A","constructor":{"prototype":{"polluted":true}}}]}');
      } else {
        res.writeHead(302, { location: 'https://elsewhere.example/' });
        res.end();
      }
    });
    const c = new UpstreamClient({
      baseUrl: server.url,
      environment: 't',
      credentials: { apiKey: 'k-0000', apiKeyScheme: 'apikey' },
      ca: server.caPem,
      ...fast,
    });
    try {
      for (const path of ['/proto/', '/ctor/']) {
        const err = await failure(collect(c.pages({ basePath: '/v2', path })));
        expect(err).toBeInstanceOf(ProtocolError);
        expect(err.message).toContain('forbidden __proto__ or constructor.prototype key');
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const err = await failure(collect(c.pages({ basePath: '/v2', path: '/moved/' })));
      expect(err).toBeInstanceOf(ProtocolError);
      expect(err).toMatchObject({ status: 302, retryable: false });
      expect(err.message).toContain('redirects are not followed');
      expect(server.requests).toHaveLength(3);
    } finally {
      await c.close();
      await server.close();
    }
  });
});
