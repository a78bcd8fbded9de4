import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { AuthError, UpstreamClient } from '../../src/upstream/index.ts';
import { client, collect, failure, fast, KEYED, MACHINE, useResetSandbox } from './fixtures.ts';

let sb: Sandbox;
useResetSandbox((started) => (sb = started));

const logins = () => sb.control.requestLog().filter((r) => r.path === '/v2/auth/token/');
const list = { basePath: '/v2', path: '/shipments/shipment-modes/' };

function keyOnly(scheme: 'apikey' | 'bearer' | 'basic'): UpstreamClient {
  return client(sb, { credentials: { apiKey: KEYED.apiKey, apiKeyScheme: scheme } });
}

describe('authentication schemes', () => {
  it('logs in with email and password and sends Token', async () => {
    const c = client(sb);
    try {
      const me = await c.me();
      expect(me.scheme).toBe('token');
      expect(me.user).toMatchObject({ id: 4101, email: MACHINE.email });
      const entries = await collect(c.pages(list));
      expect(entries).toEqual(sb.control.getEntries('shipment_modes'));
      expect(logins()).toHaveLength(1);
      const schemes = sb.control
        .requestLog()
        .filter((r) => r.path !== '/v2/auth/token/')
        .map((r) => r.authScheme);
      expect(new Set(schemes)).toEqual(new Set(['token']));
    } finally {
      await c.close();
    }
  });

  it.each(['apikey', 'bearer', 'basic'] as const)('API key only, scheme %s', async (scheme) => {
    const c = keyOnly(scheme);
    try {
      const me = await c.me();
      expect(me.scheme).toBe(scheme);
      expect(me.user).toMatchObject({ id: 4102, email: KEYED.email });
      expect(await collect(c.pages(list))).toEqual(sb.control.getEntries('shipment_modes'));
      expect(logins()).toHaveLength(0);
      expect(new Set(sb.control.requestLog().map((r) => r.authScheme))).toEqual(new Set([scheme]));
    } finally {
      await c.close();
    }
  });

  it('a wrong password is one terminal AuthError, never retried', async () => {
    const c = client(sb, { credentials: { email: MACHINE.email, password: 'wrong-password', apiKeyScheme: 'apikey' } });
    try {
      const err = await failure(c.me());
      expect(err).toBeInstanceOf(AuthError);
      expect(err.code).toBe('auth');
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/^POST \/v2\/auth\/token\/: login refused/);
      expect(err.message).not.toContain('wrong-password');
      expect(logins()).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it('a wrong API key is a terminal AuthError naming the endpoint', async () => {
    const c = client(sb, { credentials: { apiKey: 'not-a-key-0000', apiKeyScheme: 'apikey' } });
    try {
      const err = await failure(c.me());
      expect(err).toBeInstanceOf(AuthError);
      expect(err.message).toContain('GET /v2/auth/me/');
      expect(err.message).not.toContain('not-a-key-0000');
      expect(sb.control.requestLog()).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it('concurrent requests share one login', async () => {
    const c = client(sb);
    try {
      const keys = ['shipment_modes', 'service_levels', 'piece_types', 'hazmat', 'appointment_types'];
      const paths = [
        '/shipments/shipment-modes/',
        '/shipments/service-levels/',
        '/shipments/piece-types/',
        '/shipments/hazmat/',
        '/shipments/appointment-types/',
      ];
      const results = await Promise.all(paths.map((path) => collect(c.pages({ basePath: '/v2', path }))));
      results.forEach((entries, i) => {
        expect(entries).toEqual(sb.control.getEntries(keys[i]!));
      });
      expect(logins()).toHaveLength(1);
    } finally {
      await c.close();
    }
  });
});

describe('login retries: only where the request surely did not reach the service, or was refused for now', () => {
  it('a 429 on login is waited out and retried', async () => {
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: '0' }, paths: ['/v2/auth/token/'] });
    const c = client(sb);
    try {
      expect((await c.me()).scheme).toBe('token');
      expect(logins().map((r) => r.status)).toEqual([429, 200]);
    } finally {
      await c.close();
    }
  });

  it('a 500 or a stall after the login was sent is not retried', async () => {
    sb.control.setFaults({ errorCount: 1, paths: ['/v2/auth/token/'] });
    const c = client(sb, { timeouts: { headersMs: 50 } });
    try {
      const err = await failure(c.me());
      expect(err).toMatchObject({ code: 'http_status', status: 500, retryable: true });
      expect(logins()).toHaveLength(1);
      sb.control.setFaults({ stallHeaders: { count: 1 }, paths: ['/v2/auth/token/'] });
      const stalled = await failure(c.me());
      expect(stalled).toMatchObject({ code: 'timeout', endpoint: '/v2/auth/token/' });
      expect(logins()).toHaveLength(2);
      expect((await c.me()).scheme).toBe('token');
    } finally {
      await c.close();
    }
  });
});

describe('401 recovery', () => {
  it('token refused: re-login once, then the API key from the login answer, remembered per endpoint', async () => {
    sb.control.requireApiKey(['shipment_modes']);
    const c = client(sb, { credentials: { email: KEYED.email, password: KEYED.password, apiKeyScheme: 'apikey' } });
    try {
      expect(await collect(c.pages(list))).toEqual(sb.control.getEntries('shipment_modes'));
      const first = sb.control.requestLog().map((r) => `${r.path} ${r.authScheme} ${r.status}`);
      expect(first).toEqual([
        '/v2/auth/token/ null 200',
        '/v2/shipments/shipment-modes/ token 401',
        '/v2/auth/token/ null 200',
        '/v2/shipments/shipment-modes/ token 401',
        '/v2/shipments/shipment-modes/ apikey 200',
      ]);
      sb.control.resetRequestLog();
      // Remembered: the key goes first now, and other endpoints keep the token.
      await collect(c.pages(list));
      await collect(c.pages({ basePath: '/v2', path: '/shipments/service-levels/' }));
      expect(sb.control.requestLog().map((r) => `${r.path} ${r.authScheme} ${r.status}`)).toEqual([
        '/v2/shipments/shipment-modes/ apikey 200',
        '/v2/shipments/service-levels/ token 200',
      ]);
    } finally {
      await c.close();
    }
  });

  it('a configured API key is the fallback too, in its configured scheme', async () => {
    sb.control.requireApiKey(['/v2/shipments/shipment-modes/']);
    const c = client(sb, { credentials: { ...MACHINE, apiKey: KEYED.apiKey, apiKeyScheme: 'bearer' } });
    try {
      expect(await collect(c.pages(list))).toEqual(sb.control.getEntries('shipment_modes'));
      expect(sb.control.requestLog().at(-1)).toMatchObject({ authScheme: 'bearer', status: 200 });
    } finally {
      await c.close();
    }
  });

  it('token refused, no key known: terminal AuthError after exactly one re-login', async () => {
    sb.control.requireApiKey(['shipment_modes']);
    const c = client(sb);
    try {
      const err = await failure(collect(c.pages(list)));
      expect(err).toBeInstanceOf(AuthError);
      expect(err.retryable).toBe(false);
      expect(err.message).toContain('GET /v2/shipments/shipment-modes/ page 1: 401');
      expect(logins()).toHaveLength(2);
    } finally {
      await c.close();
    }
  });

  it('401 after re-login and after the key: terminal, exactly one re-login, no loop', async () => {
    sb.control.setFaults({ unauthorizedOnPage: { page: 1, count: 100 }, paths: ['shipment_modes'] });
    const c = client(sb, { credentials: { email: KEYED.email, password: KEYED.password, apiKeyScheme: 'apikey' } });
    try {
      const err = await failure(collect(c.pages(list)));
      expect(err).toBeInstanceOf(AuthError);
      expect(err.code).toBe('auth');
      expect(err.endpoint).toBe('/v2/shipments/shipment-modes/');
      expect(err.message).toMatch(/^GET \/v2\/shipments\/shipment-modes\/ page 1: 401/);
      expect(logins()).toHaveLength(2);
      const listCalls = sb.control.requestLog().filter((r) => r.path === '/v2/shipments/shipment-modes/');
      expect(listCalls.map((r) => r.authScheme)).toEqual(['token', 'token', 'apikey']);
    } finally {
      await c.close();
    }
  });

  it('token expiry in the middle of paging: re-login and the list resumes where it was', async () => {
    sb.control.setGenerated('nmfc_codes', 2500);
    sb.control.setPaging('nmfc_codes', 'envelope');
    sb.control.setTokenLifetime({ requests: 2 });
    const c = client(sb, { pageSize: 100 });
    try {
      const entries = await collect(c.pages({ basePath: '/v2', path: '/shipments/nmfc/' }));
      expect(entries).toEqual(sb.control.getEntries('nmfc_codes'));
      expect(entries).toHaveLength(2500);
      // 25 pages, a token lasts 2 requests: a login every 2 pages, never a page fetched twice successfully.
      expect(logins().length).toBe(13);
      const ok = sb.control.requestLog().filter((r) => r.path === '/v2/shipments/nmfc/' && r.status === 200);
      expect(new Set(ok.map((r) => r.query)).size).toBe(25);
    } finally {
      await c.close();
    }
  });

  it('a 401 on a later page of an envelope list recovers with one re-login', async () => {
    sb.control.setGenerated('nmfc_codes', 300);
    sb.control.setPaging('nmfc_codes', 'next');
    sb.control.setFaults({ unauthorizedOnPage: { page: 2, count: 1 }, paths: ['nmfc_codes'] });
    const c = client(sb, { pageSize: 100 });
    try {
      expect(await collect(c.pages({ basePath: '/v2', path: '/shipments/nmfc/' }))).toEqual(sb.control.getEntries('nmfc_codes'));
      expect(logins()).toHaveLength(2);
    } finally {
      await c.close();
    }
  });

  it('keeps working with the same options object after close of another client', async () => {
    const a = client(sb);
    const b = new UpstreamClient({ baseUrl: sb.url, environment: 'b', credentials: { ...MACHINE, apiKeyScheme: 'apikey' }, ca: [sb.caPem], ...fast });
    await a.me();
    await a.close();
    await a.close();
    expect((await b.me()).scheme).toBe('token');
    await b.close();
  });
});
