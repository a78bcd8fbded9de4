import { createSecureContext } from 'node:tls';
import { connect } from 'node:net';
import { errors } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxFaults } from '../../src/sandbox/types.ts';
import { mapTransportError } from '../../src/upstream/client.ts';
import {
  HttpStatusError,
  NetworkError,
  PagingError,
  ProtocolError,
  TimeoutError,
  TlsError,
  UpstreamConfigError,
  type UpstreamClientOptions,
} from '../../src/upstream/index.ts';
import { client, collect, failure, sandbox } from './fixtures.ts';

// Which class each failure is, and so whether a retry follows: the network and the service's
// transient answers are retried; a request that cannot be built, TLS settings that cannot work and
// URLs that do not parse fail at once.

let sb: Sandbox;
beforeAll(async () => {
  sb = await sandbox();
});
afterAll(async () => {
  await sb.close();
});

const modes = { basePath: '/v2', path: '/shipments/shipment-modes/' };
const attempts = 3;

/** Runs `work` on a client with `attempts` tries; the error and how many tries reached the wire or failed on the way. */
async function outcome(options: Partial<UpstreamClientOptions>, work: 'me' | 'list' | 'missing') {
  let tries = 0;
  sb.control.resetRequestLog();
  const c = client(sb, { retry: { attempts, baseDelayMs: 1, maxDelayMs: 2 }, onRequest: () => void tries++, ...options });
  try {
    const list = work === 'missing' ? { basePath: '/v2', path: '/shipments/no-such-list/' } : modes;
    const err = await failure(work === 'me' ? c.me() : collect(c.pages(list)));
    return { err, tries, served: sb.control.requestLog().length };
  } finally {
    await c.close();
  }
}

describe('upstream failures through the client, each with its class and its retries', () => {
  type Case = [
    string,
    Partial<UpstreamClientOptions>,
    SandboxFaults | undefined,
    'me' | 'list' | 'missing',
    new (...args: never[]) => Error,
    string,
    boolean,
    number,
  ];
  const cases: Case[] = [
    ['an API key holding CR LF', { credentials: { apiKey: 'abc\r\nX', apiKeyScheme: 'apikey' } }, undefined, 'me', UpstreamConfigError, 'config', false, 1],
    ['a bearer key holding NUL', { credentials: { apiKey: 'abc\u0000X', apiKeyScheme: 'bearer' } }, undefined, 'me', UpstreamConfigError, 'config', false, 1],
    ['a certificate the client does not trust', { ca: [] }, undefined, 'me', TlsError, 'tls', false, 1],
    ['an unreachable port', { baseUrl: 'https://127.0.0.1:1' }, undefined, 'me', NetworkError, 'network', true, attempts],
    ['500 on every try', {}, { errorCount: 100, paths: ['shipment_modes'] }, 'list', HttpStatusError, 'http_status', true, attempts],
    ['404', {}, undefined, 'missing', HttpStatusError, 'http_status', false, 1],
    ['a next link that is not a URL', {}, { foreignNext: { list: 'shipment_modes', url: 'https://[not-a-url' } }, 'list', PagingError, 'paging', false, 1],
  ];
  it.each(cases)('%s', async (_name, options, faults, work, type, code, retryable, tries) => {
    if (faults) sb.control.setFaults(faults);
    try {
      const { err, tries: seen } = await outcome(options, work);
      expect(err).toBeInstanceOf(type);
      expect(err).toMatchObject({ code, retryable });
      expect(seen - (work === 'me' ? 0 : 1)).toBe(tries); // a list's tries follow its login
      expect(err.message).not.toContain('abc');
    } finally {
      sb.control.clearFaults();
    }
  });

  it('a header that cannot be sent reaches neither the service nor the shared connection pool', async () => {
    const bad = await outcome({ credentials: { apiKey: 'abc\r\nX', apiKeyScheme: 'apikey' } }, 'me');
    expect(bad.served).toBe(0);
    expect(bad.err.message).toBe('GET /v2/auth/me/: the authorization header would hold a control character (CR, LF, NUL or the like); not sent');
    // Another client on the same origin and CA shares the pool: it still gets answers.
    const good = client(sb);
    try {
      expect((await good.me()).user).toBeDefined();
    } finally {
      await good.close();
    }
  });
});

/** The error a real failure of this kind raises, caught. */
function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

function refusedConnection(): Promise<unknown> {
  return new Promise((resolve) => connect({ host: '127.0.0.1', port: 1 }).on('error', resolve));
}

describe('low-level errors mapped to classes', () => {
  const req = { where: 'GET /x/', endpoint: '/x/', url: new URL('https://upstream.example/x/') };
  it.each([
    ['undici invalid argument', () => new errors.InvalidArgumentError('invalid authorization header'), UpstreamConfigError, 'config', false],
    ['an unparsable URL', () => caught(() => new URL('https://exa mple/')), UpstreamConfigError, 'config', false],
    ['OpenSSL refusing a certificate', () => caught(() => createSecureContext({ cert: 'not a certificate' })), TlsError, 'tls', false],
    ['an untrusted certificate', () => Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), TlsError, 'tls', false],
    ['a refused connection', refusedConnection, NetworkError, 'network', true],
    ['a socket closed by the other side', () => new errors.SocketError('other side closed'), NetworkError, 'network', true],
    ['headers that never came', () => new errors.HeadersTimeoutError(), TimeoutError, 'timeout', true],
    ['a malformed response', () => Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_CONSTANT' }), ProtocolError, 'protocol', true],
  ] as const)('%s', async (_name, make, type, code, retryable) => {
    const mapped = mapTransportError(await make(), req, 'before the response headers');
    expect(mapped).toBeInstanceOf(type);
    expect(mapped).toMatchObject({ code, retryable });
  });
});
