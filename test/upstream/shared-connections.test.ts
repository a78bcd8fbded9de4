import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificates } from '../../src/sandbox/certificates.ts';
import { NetworkError, TimeoutError, UpstreamClient, type UpstreamClientOptions } from '../../src/upstream/index.ts';
import { failure, fast, json, tinyServer, type TinyServer } from './fixtures.ts';

// Sources of one origin with the same TLS settings share sockets (P4: a thousand sources of one
// service); what stays per client is asserted here: credential, timeouts, closing.

const STALL_MS = 1200;

/** undici frees a socket for the next request a tick after the answer is read; until then it opens another. */
const socketFreed = () => new Promise((r) => setTimeout(r, 10));

let server: TinyServer;
beforeAll(async () => {
  server = await tinyServer((req: IncomingMessage, res: ServerResponse) => {
    const answer = () => json(res, 200, { user: { id: 1, key: req.headers.authorization } });
    if (req.headers.authorization?.endsWith('stalled')) setTimeout(answer, STALL_MS);
    else answer();
  });
});
afterAll(async () => {
  await server.close();
});

function keyClient(apiKey: string, options: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  return new UpstreamClient({
    baseUrl: server.url,
    environment: apiKey,
    credentials: { apiKey, apiKeyScheme: 'bearer' },
    ca: server.caPem,
    ...fast,
    ...options,
  });
}

describe('connections shared between clients', () => {
  it('clients of one origin with the same CA use one connection, each with its own credential', async () => {
    const connectionsBefore = server.connections();
    const a = keyClient('key-a');
    const b = keyClient('key-b');
    try {
      expect((await a.me()).user).toMatchObject({ key: 'Bearer key-a' });
      await socketFreed();
      expect((await b.me()).user).toMatchObject({ key: 'Bearer key-b' });
      await socketFreed();
      expect((await a.me()).user).toMatchObject({ key: 'Bearer key-a' });
      expect(server.connections() - connectionsBefore).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a client trusting another set of CAs never shares them', async () => {
    const connectionsBefore = server.connections();
    const otherCa = (await generateCertificates(['127.0.0.1'])).caPem;
    const a = keyClient('key-a');
    const b = keyClient('key-b', { ca: [server.caPem, otherCa] });
    try {
      await a.me();
      await socketFreed();
      await b.me();
      expect(server.connections() - connectionsBefore).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('closing one client leaves the other working on the same connection; the closed one refuses', async () => {
    const connectionsBefore = server.connections();
    const a = keyClient('key-a');
    const b = keyClient('key-b');
    try {
      await a.me();
      await a.close();
      await socketFreed();
      expect((await b.me()).user).toMatchObject({ key: 'Bearer key-b' });
      expect(server.connections() - connectionsBefore).toBe(1);
      const err = await failure(a.me());
      expect(err).toBeInstanceOf(NetworkError);
      expect(err.message).toMatch(/UND_ERR_CLOSED/);
    } finally {
      await b.close();
    }
  });

  it('closing a client waits for its own request in flight', async () => {
    const a = keyClient('key-a-stalled');
    const b = keyClient('key-b');
    try {
      await b.me();
      const answer = a.me();
      await new Promise((r) => setTimeout(r, 50));
      const closed = a.close();
      expect((await answer).user).toMatchObject({ key: 'Bearer key-a-stalled' });
      await closed;
      expect((await b.me()).user).toMatchObject({ key: 'Bearer key-b' });
    } finally {
      await b.close();
    }
  });

  it('each client keeps its own headers timeout on the shared connections', async () => {
    const connect = { connectMs: 2000 };
    const impatient = keyClient('key-a-stalled', { timeouts: { ...connect, headersMs: 40, bodyMs: 40 }, retry: { attempts: 1 } });
    const patient = keyClient('key-b-stalled', { timeouts: { ...connect, headersMs: 10 * STALL_MS, bodyMs: 10 * STALL_MS }, retry: { attempts: 1 } });
    try {
      const [timedOut, answered] = await Promise.all([failure(impatient.me()), patient.me()]);
      expect(timedOut).toBeInstanceOf(TimeoutError);
      expect(answered.user).toMatchObject({ key: 'Bearer key-b-stalled' });
    } finally {
      await impatient.close();
      await patient.close();
    }
  });
});
