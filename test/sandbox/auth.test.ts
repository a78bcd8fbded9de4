import { describe, expect, it } from 'vitest';
import { SANDBOX_KEYED_ACCOUNT, SANDBOX_MACHINE_ACCOUNT, sandboxLogin, sandboxRequest, useSandbox, type Sandbox } from '../helpers/sandbox.ts';

const json = { 'content-type': 'application/json' };
const key = SANDBOX_KEYED_ACCOUNT.apiKey as string;
const basic = (user: string, password = '') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function login(sb: Sandbox, body: string, headers: Record<string, string> = json) {
  return sandboxRequest(sb, '/v2/auth/token/', { method: 'POST', headers, body });
}

describe('POST /v2/auth/token/', () => {
  it('returns the credential response of the spec', async () => {
    const sb = await useSandbox();
    const res = await login(sb, JSON.stringify({ email: SANDBOX_MACHINE_ACCOUNT.email, password: SANDBOX_MACHINE_ACCOUNT.password }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    const body = res.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(['api_key', 'driver', 'driver_token', 'token', 'user']);
    expect(typeof body.token).toBe('string');
    expect(body.driver_token).toBeNull();
    expect(body.driver).toBeNull();
    expect(body.api_key).toBeNull();
    expect(body.user).toMatchObject({ id: SANDBOX_MACHINE_ACCOUNT.userId, email: SANDBOX_MACHINE_ACCOUNT.email });
    expect(Array.isArray((body.user as { permissions: unknown }).permissions)).toBe(true);
  });

  it('returns the api key of an account that has one, and a fresh token per login', async () => {
    const sb = await useSandbox();
    const body = JSON.stringify({ email: SANDBOX_KEYED_ACCOUNT.email, password: SANDBOX_KEYED_ACCOUNT.password });
    const a = (await login(sb, body)).json<{ token: string; api_key: string }>();
    const b = (await login(sb, body)).json<{ token: string; api_key: string }>();
    expect(a.api_key).toBe(key);
    expect(a.token).not.toBe(b.token);
  });

  it('answers 400 invalid_credentials for a wrong password or unknown e-mail', async () => {
    const sb = await useSandbox();
    for (const creds of [
      { email: SANDBOX_MACHINE_ACCOUNT.email, password: 'wrong' },
      { email: 'nobody@sandbox.test', password: 'sandbox-password' },
    ]) {
      const res = await login(sb, JSON.stringify(creds));
      expect(res.status).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_credentials', error_description: 'Unable to log in with provided credentials.' });
    }
  });

  it('names missing and blank fields', async () => {
    const sb = await useSandbox();
    let res = await login(sb, JSON.stringify({}));
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ email: ['This field is required.'], password: ['This field is required.'] });
    res = await login(sb, JSON.stringify({ email: SANDBOX_MACHINE_ACCOUNT.email }));
    expect(res.json()).toEqual({ password: ['This field is required.'] });
    res = await login(sb, JSON.stringify({ email: '', password: 'x' }));
    expect(res.json()).toEqual({ email: ['This field may not be blank.'] });
    res = await login(sb, JSON.stringify({ email: 5, password: 'x' }));
    expect(res.json()).toEqual({ email: ['Not a valid string.'] });
  });

  it('answers 400 to a body that is not JSON, 415 to another media type, 405 to GET', async () => {
    const sb = await useSandbox();
    const bad = await login(sb, '{"email": ');
    expect(bad.status).toBe(400);
    expect(bad.json<{ detail: string }>().detail).toMatch(/JSON parse error/);
    const list = await login(sb, '[1,2]');
    expect(list.status).toBe(400);
    const form = await login(sb, 'email=a&password=b', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    const get = await sandboxRequest(sb, '/v2/auth/token/');
    expect(get.status).toBe(405);
  });
});

describe('GET /v2/auth/me/ and the four schemes', () => {
  it('accepts Token, APIkey, Bearer and Basic (key as username, empty password)', async () => {
    const sb = await useSandbox();
    const token = await sandboxLogin(sb);
    const cases: [string, number][] = [
      [`Token ${token}`, SANDBOX_MACHINE_ACCOUNT.userId],
      [`APIkey ${key}`, SANDBOX_KEYED_ACCOUNT.userId],
      [`Bearer ${key}`, SANDBOX_KEYED_ACCOUNT.userId],
      [basic(key), SANDBOX_KEYED_ACCOUNT.userId],
    ];
    for (const [authorization, id] of cases) {
      const res = await sandboxRequest(sb, '/v2/auth/me/', { headers: { authorization } });
      expect(res.status, authorization.split(' ')[0]).toBe(200);
      expect(res.json()).toMatchObject({ id });
    }
    expect(
      sb.control
        .requestLog()
        .map((e) => e.authScheme)
        .slice(-4),
    ).toEqual(['token', 'apikey', 'bearer', 'basic']);
  });

  it('answers 401 with the text Authorization Required to a missing or bad credential', async () => {
    const sb = await useSandbox();
    const token = await sandboxLogin(sb);
    const bad = [
      undefined,
      'Token nope',
      `APIkey nope`,
      `Bearer ${token}`, // Bearer carries an API key, not a user token
      `Token ${key}`,
      basic(key, 'secret'), // "no password is needed": a password is not accepted either
      basic('nope'),
      `Digest ${key}`,
      'Token',
    ];
    for (const authorization of bad) {
      const res = await sandboxRequest(sb, '/v2/auth/me/', { headers: authorization ? { authorization } : {} });
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toBe('Authorization Required');
    }
  });

  it('keeps credentials out of the request log', async () => {
    const sb = await useSandbox();
    const token = await sandboxLogin(sb);
    await sandboxRequest(sb, '/v2/auth/me/', { headers: { authorization: `Token ${token}` } });
    const log = JSON.stringify(sb.control.requestLog());
    expect(log).not.toContain(token);
    expect(log).not.toContain(SANDBOX_MACHINE_ACCOUNT.password);
    expect(sb.control.requestLog()).toEqual([
      { method: 'POST', path: '/v2/auth/token/', query: '', authScheme: null, status: 200 },
      { method: 'GET', path: '/v2/auth/me/', query: '', authScheme: 'token', status: 200 },
    ]);
  });
});

describe('token lifetime and requireApiKey', () => {
  it('expires a token after N authenticated requests, also in the middle of paging', async () => {
    const sb = await useSandbox();
    sb.control.setTokenLifetime({ requests: 2 });
    const token = await sandboxLogin(sb);
    const auth = { authorization: `Token ${token}` };
    expect((await sandboxRequest(sb, '/v2/shipments/nmfc/?page=1', { headers: auth })).status).toBe(200);
    expect((await sandboxRequest(sb, '/v2/shipments/nmfc/?page=2', { headers: auth })).status).toBe(200);
    const third = await sandboxRequest(sb, '/v2/shipments/nmfc/?page=3', { headers: auth });
    expect(third.status).toBe(401);
    expect(third.text).toBe('Authorization Required');
    // A fresh login gets a fresh allowance.
    const again = await sandboxLogin(sb);
    expect((await sandboxRequest(sb, '/v2/shipments/nmfc/?page=3', { headers: { authorization: `Token ${again}` } })).status).toBe(200);
    // API keys have no lifetime.
    for (let i = 0; i < 3; i++) expect((await sandboxRequest(sb, '/v2/auth/me/', { headers: { authorization: `APIkey ${key}` } })).status).toBe(200);
  });

  it('expires a token after S seconds', async () => {
    const sb = await useSandbox();
    sb.control.setTokenLifetime({ seconds: 0 });
    const token = await sandboxLogin(sb);
    expect((await sandboxRequest(sb, '/v2/auth/me/', { headers: { authorization: `Token ${token}` } })).status).toBe(401);
    sb.control.setTokenLifetime({});
    expect((await sandboxRequest(sb, '/v2/auth/me/', { headers: { authorization: `Token ${token}` } })).status).toBe(200);
  });

  it('requireApiKey: those endpoints refuse Token with 401 and accept the API-key schemes', async () => {
    const sb = await useSandbox();
    sb.control.requireApiKey(['charge_codes', '/v2/shipments/hazmat/']);
    const token = await sandboxLogin(sb);
    for (const path of ['/reference-data/charge-codes/', '/v2/shipments/hazmat/']) {
      const refused = await sandboxRequest(sb, path, { headers: { authorization: `Token ${token}` } });
      expect(refused.status).toBe(401);
      expect(refused.text).toBe('Authorization Required');
      for (const authorization of [`APIkey ${key}`, `Bearer ${key}`, basic(key)]) {
        expect((await sandboxRequest(sb, path, { headers: { authorization } })).status).toBe(200);
      }
    }
    expect((await sandboxRequest(sb, '/v2/shipments/accessorials/', { headers: { authorization: `Token ${token}` } })).status).toBe(200);
  });
});
