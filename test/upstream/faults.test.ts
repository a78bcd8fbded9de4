import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { HttpStatusError, NetworkError, ProtocolError, SizeError, TimeoutError } from '../../src/upstream/index.ts';
import { client, collect, failure, useResetSandbox } from './fixtures.ts';

let sb: Sandbox;
useResetSandbox((started) => (sb = started));

const modes = { basePath: '/v2', path: '/shipments/shipment-modes/' };
const listCalls = () => sb.control.requestLog().filter((r) => r.path === modes.basePath + modes.path);

describe('retries', () => {
  it('429 with Retry-After in seconds: waits at least that long, then succeeds', async () => {
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: '1' }, paths: ['shipment_modes'] });
    const c = client(sb);
    try {
      const started = Date.now();
      expect(await collect(c.pages(modes))).toEqual(sb.control.getEntries('shipment_modes'));
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(listCalls().map((r) => r.status)).toEqual([429, 200]);
    } finally {
      await c.close();
    }
  });

  it('429 with Retry-After as an HTTP date', async () => {
    const when = new Date(Date.now() + 2000);
    const httpDate = when.toUTCString();
    sb.control.setFaults({ rateLimit: { count: 2, retryAfter: httpDate }, paths: ['shipment_modes'] });
    const c = client(sb);
    try {
      expect(await collect(c.pages(modes))).toEqual(sb.control.getEntries('shipment_modes'));
      // HTTP dates have whole seconds: the floor is the date itself, minus its sub-second part.
      expect(Date.now()).toBeGreaterThanOrEqual(Math.floor(when.getTime() / 1000) * 1000);
      expect(listCalls().map((r) => r.status)).toEqual([429, 429, 200]);
    } finally {
      await c.close();
    }
  });

  it('a Retry-After beyond maxRetryAfterMs is not waited for: retryable error with retryAfterMs', async () => {
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: '3600' }, paths: ['shipment_modes'] });
    const c = client(sb);
    try {
      const err = await failure(collect(c.pages(modes)));
      expect(err).toBeInstanceOf(HttpStatusError);
      expect(err).toMatchObject({ code: 'http_status', status: 429, retryable: true, retryAfterMs: 3_600_000 });
      expect(listCalls()).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it('500s then success', async () => {
    sb.control.setFaults({ errorCount: 3, paths: ['shipment_modes'] });
    const seen: Array<{ endpoint: string; status: number | null; code?: string }> = [];
    const c = client(sb, { onRequest: ({ endpoint, status, code }) => void seen.push({ endpoint, status, ...(code ? { code } : {}) }) });
    try {
      expect(await collect(c.pages(modes))).toEqual(sb.control.getEntries('shipment_modes'));
      expect(listCalls().map((r) => r.status)).toEqual([500, 500, 500, 200]);
      const endpoint = '/v2/shipments/shipment-modes/';
      expect(seen).toEqual([
        { endpoint: '/v2/auth/token/', status: 200 },
        ...Array.from({ length: 3 }, () => ({ endpoint, status: 500, code: 'http_status' })),
        { endpoint, status: 200 },
      ]);
    } finally {
      await c.close();
    }
  });

  it('500s beyond the attempts: a retryable HttpStatusError after exactly `attempts` tries', async () => {
    sb.control.setFaults({ errorCount: 10, paths: ['shipment_modes'] });
    const c = client(sb, { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    try {
      const err = await failure(collect(c.pages(modes)));
      expect(err).toBeInstanceOf(HttpStatusError);
      expect(err).toMatchObject({ status: 500, retryable: true, endpoint: '/v2/shipments/shipment-modes/' });
      expect(err.message).toMatch(/^GET \/v2\/shipments\/shipment-modes\/ page 1: 500/);
      expect(listCalls()).toHaveLength(3);
    } finally {
      await c.close();
    }
  });

  it('other 4xx are not retried (404 for an unknown path)', async () => {
    const c = client(sb);
    try {
      const err = await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/no-such-list/' })));
      expect(err).toBeInstanceOf(HttpStatusError);
      expect(err).toMatchObject({ status: 404, retryable: false });
      expect(sb.control.requestLog().filter((r) => r.path === '/v2/shipments/no-such-list/')).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it('a body reset mid-stream is retried', async () => {
    sb.control.setFaults({ resetBody: { count: 2 }, paths: ['shipment_modes'] });
    const c = client(sb);
    try {
      expect(await collect(c.pages(modes))).toEqual(sb.control.getEntries('shipment_modes'));
      expect(listCalls()).toHaveLength(3);
    } finally {
      await c.close();
    }
  });
});

describe('timeouts and connection hygiene', () => {
  // Sockets of this process (the sandbox's server side included); a leaked client socket keeps one.
  function sockets(): number {
    return process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'TLSWRAP' || r === 'TCPWRAP').length;
  }

  // undici runs headers/body timeouts on its coarse timer (about 1 s resolution whatever the value),
  // so the 50 stalls run 10 at a time.
  it('stalled headers and stalled bodies time out, 50 times over, without leaking a socket', async () => {
    const c = client(sb, {
      timeouts: { connectMs: 1000, headersMs: 40, bodyMs: 40 },
      retry: { attempts: 1 },
    });
    try {
      await c.me(); // one login, one kept-alive connection
      await new Promise((r) => setTimeout(r, 20));
      const before = sockets();
      for (let round = 0; round < 5; round++) {
        const stallHeaders = round % 2 === 0;
        sb.control.setFaults(
          stallHeaders ? { stallHeaders: { count: 10 }, paths: ['shipment_modes'] } : { stallBody: { count: 10 }, paths: ['shipment_modes'] },
        );
        const errors = await Promise.all(Array.from({ length: 10 }, () => failure(collect(c.pages(modes)))));
        for (const err of errors) {
          expect(err).toBeInstanceOf(TimeoutError);
          expect(err).toMatchObject({ code: 'timeout', retryable: true, endpoint: '/v2/shipments/shipment-modes/' });
          expect(err.message).toMatch(stallHeaders ? /page 1: no response headers/ : /page 1: response body stalled/);
        }
      }
      sb.control.clearFaults();
      expect(await collect(c.pages(modes))).toEqual(sb.control.getEntries('shipment_modes'));
      // Every timed-out socket was destroyed on both sides: no more than the warm connection remains.
      await new Promise((r) => setTimeout(r, 50));
      expect(sockets()).toBeLessThanOrEqual(before);
    } finally {
      await c.close();
    }
  });

  it('a stall is retried like any timeout when attempts allow', async () => {
    sb.control.setFaults({ stallHeaders: { count: 1 }, paths: ['shipment_modes'] });
    const c = client(sb, { timeouts: { headersMs: 50, bodyMs: 50 } });
    try {
      expect(await collect(c.pages(modes))).toEqual(sb.control.getEntries('shipment_modes'));
    } finally {
      await c.close();
    }
  });
});

describe('bodies that are not a list', () => {
  it('truncated JSON is a ProtocolError, never an empty list', async () => {
    sb.control.setFaults({ truncate: { count: 1 }, paths: ['shipment_modes'] });
    const c = client(sb);
    try {
      const err = await failure(collect(c.pages(modes)));
      expect(err).toBeInstanceOf(ProtocolError);
      expect(err.message).toMatch(/^GET \/v2\/shipments\/shipment-modes\/ page 1: answered truncated or invalid JSON/);
      expect(listCalls()).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it('an HTML 200 is a ProtocolError', async () => {
    sb.control.setFaults({ html: { count: 1 }, paths: ['shipment_modes'] });
    const c = client(sb);
    try {
      const err = await failure(collect(c.pages(modes)));
      expect(err).toBeInstanceOf(ProtocolError);
      expect(err.code).toBe('protocol');
      expect(err.message).toContain('an HTML page instead of JSON');
    } finally {
      await c.close();
    }
  });

  it('an entry over the bytes-per-entry limit is a SizeError (bare array, streamed huge entry)', async () => {
    sb.control.setPaging('shipment_modes', 'array');
    sb.control.setFaults({ hugeBody: { list: 'shipment_modes', bytes: 2 * 1024 * 1024 } });
    const c = client(sb, { listLimits: { maxEntryBytes: 256 * 1024 } });
    try {
      const err = await failure(collect(c.pages(modes)));
      expect(err).toBeInstanceOf(SizeError);
      expect(err).toMatchObject({ code: 'size', retryable: false });
      expect(err.message).toContain('an entry is longer than 262144 bytes, the limit of REFSYNC_MAX_ENTRY_BYTES');
      // The connection was dropped, not drained: the next request still works.
      sb.control.clearFaults();
      expect(await collect(c.pages(modes))).toEqual(sb.control.getEntries('shipment_modes'));
    } finally {
      await c.close();
    }
  });

  it('an unreachable port is a retryable NetworkError after the attempts', async () => {
    const c = client(sb, { baseUrl: 'https://127.0.0.1:1', retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
    try {
      const err = await failure(c.me());
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).toMatchObject({ code: 'network', retryable: true });
      expect(err.message).toContain('ECONNREFUSED');
    } finally {
      await c.close();
    }
  });
});
