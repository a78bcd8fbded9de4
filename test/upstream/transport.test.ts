import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { TlsError, UpstreamClient, UpstreamConfigError, createUpstreamClient } from '../../src/upstream/index.ts';
import type { SourceConfig } from '../../src/config/types.ts';
import { fast, failure, MACHINE, sandbox } from './fixtures.ts';

let sb: Sandbox;
beforeAll(async () => {
  sb = await sandbox();
});
afterAll(async () => {
  await sb.close();
});

const credentials = { ...MACHINE, apiKeyScheme: 'apikey' as const };

describe('transport', () => {
  it('refuses an http:// base URL in the constructor', () => {
    expect(() => new UpstreamClient({ baseUrl: sb.url.replace('https:', 'http:'), environment: 't', credentials })).toThrow(UpstreamConfigError);
    expect(() => new UpstreamClient({ baseUrl: sb.url.replace('https:', 'http:'), environment: 't', credentials })).toThrow(/plain http:\/\/ is refused/);
    expect(() => new UpstreamClient({ baseUrl: `${sb.url}/v2`, environment: 't', credentials })).toThrow(/no path/);
  });

  it('an untrusted certificate is a TlsError, never a silent fallback', async () => {
    sb.control.resetRequestLog();
    const c = new UpstreamClient({ baseUrl: sb.url, environment: 't', credentials, ...fast });
    try {
      const err = await failure(c.me());
      expect(err).toBeInstanceOf(TlsError);
      expect(err).toMatchObject({ code: 'tls', retryable: false });
      expect(err.message).toMatch(new RegExp(`^TLS: certificate of 127\\.0\\.0\\.1:${sb.port} is not trusted \\([A-Z_]+\\); set REFSYNC_CA_FILE`));
      expect(sb.control.requestLog()).toHaveLength(0);
    } finally {
      await c.close();
    }
  });

  it('createUpstreamClient takes the CA, credentials and scheme from the source', async () => {
    const source = {
      name: 'sb',
      environment: 'sandbox',
      baseUrl: sb.url,
      apiKey: 'sandbox-api-key-0001',
      apiKeyScheme: 'basic',
      caPem: sb.caPem,
    } as unknown as SourceConfig;
    const c = createUpstreamClient(source, undefined, fast);
    try {
      const me = await c.me();
      expect(me.scheme).toBe('basic');
      expect(me.user).toMatchObject({ id: 4102 });
    } finally {
      await c.close();
    }
  });

  it('refuses paths without a trailing slash', async () => {
    const c = new UpstreamClient({ baseUrl: sb.url, environment: 't', credentials, ca: sb.caPem, ...fast });
    try {
      const err = await failure(c.pages({ basePath: '/v2', path: '/shipments/hazmat' }).next());
      expect(err).toBeInstanceOf(UpstreamConfigError);
    } finally {
      await c.close();
    }
  });
});
