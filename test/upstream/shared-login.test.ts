// A login that fails for a reason every list of the source shares (an unreachable host, a refused
// password) fails the source's other lists at once with the same error, and its retries are one
// warning, not a login and a round of retry warnings per list.
// A token refused on a list still logs in again (auth.test.ts), and a stalled login does not stop
// the next one. A host gone while the token is in hand is kept the same way, once a list's request
// has given up on it.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { AuthError, NetworkError, type UpstreamClient, type UpstreamClientOptions } from '../../src/upstream/index.ts';
import { FailedLogin } from '../../src/upstream/auth.ts';
import { RetryWarnings } from '../../src/upstream/retry-warnings.ts';
import { QuietRepeats } from '../../src/util/quiet-repeats.ts';
import { captureLogs } from '../helpers/logs.ts';
import { client, collect, failure, fast, MACHINE, sandbox, useResetSandbox } from './fixtures.ts';

let sb: Sandbox;
useResetSandbox((started) => (sb = started));

const paths = ['/shipments/shipment-modes/', '/shipments/service-levels/', '/shipments/piece-types/', '/shipments/hazmat/', '/shipments/appointment-types/'];
const logins = () => sb.control.requestLog().filter((r) => r.path === '/v2/auth/token/');

/** Every list's failure: the first `together` at once (sharing the login in flight), the rest one after the other. */
async function failures(c: UpstreamClient, together: number): Promise<Array<Error & Record<string, unknown>>> {
  const first = await Promise.all(paths.slice(0, together).map((path) => failure(collect(c.pages({ basePath: '/v2', path })))));
  const rest: Array<Error & Record<string, unknown>> = [];
  for (const path of paths.slice(together)) rest.push(await failure(collect(c.pages({ basePath: '/v2', path }))));
  return [...first, ...rest];
}

describe("a login's failure that every list shares", () => {
  it('an unreachable host: one login and its retries for all the lists, one warning, the same error for each', async () => {
    const logs = captureLogs('info');
    const requests: Array<{ endpoint: string; code?: string }> = [];
    const options: Partial<UpstreamClientOptions> = { baseUrl: 'https://127.0.0.1:1', onRequest: (info) => requests.push(info) };
    const c = client(sb, options, logs.logger);
    try {
      const errors = await failures(c, 2);
      expect(errors).toHaveLength(paths.length);
      for (const err of errors) {
        expect(err).toBeInstanceOf(NetworkError);
        expect(err.message).toBe('POST /v2/auth/token/: cannot connect to 127.0.0.1:1 (ECONNREFUSED)');
      }
      // One login tried as often as the retry policy allows, and no list request without a token.
      expect(requests).toEqual(
        Array.from({ length: fast.retry!.attempts! }, () => ({
          endpoint: '/v2/auth/token/',
          method: 'POST',
          status: null,
          durationMs: expect.any(Number),
          code: 'network',
        })),
      );
      const warnings = logs.lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 40);
      expect(warnings).toEqual([
        expect.objectContaining({
          attempt: 1,
          reason: 'network',
          msg: expect.stringMatching(/^upstream request failed \(POST \/v2\/auth\/token\/: cannot connect .*\); retrying/),
        }),
      ]);
    } finally {
      await c.close();
    }
  });

  it('a refused password: one login for all the lists, never one per list', async () => {
    const c = client(sb, { credentials: { email: MACHINE.email, password: 'wrong-password', apiKeyScheme: 'apikey' } });
    try {
      const errors = await failures(c, 2);
      for (const err of errors) {
        expect(err).toBeInstanceOf(AuthError);
        expect(err.message).toMatch(/^POST \/v2\/auth\/token\/: login refused \(400/);
      }
      expect(logins()).toHaveLength(1);
      expect(sb.control.requestLog().filter((r) => r.path !== '/v2/auth/token/')).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('a stall after the login was sent is not kept: the next list logs in again and syncs', async () => {
    sb.control.setFaults({ stallHeaders: { count: 1 }, paths: ['/v2/auth/token/'] });
    const c = client(sb, { timeouts: { headersMs: 50 } });
    try {
      expect(await failure(collect(c.pages({ basePath: '/v2', path: paths[0]! })))).toMatchObject({ code: 'timeout', endpoint: '/v2/auth/token/' });
      expect(await collect(c.pages({ basePath: '/v2', path: paths[0]! }))).toEqual(sb.control.getEntries('shipment_modes'));
      expect(logins()).toHaveLength(2);
    } finally {
      await c.close();
    }
  });
});

describe('a host gone with a token in hand', () => {
  it("the first list that gives up on it keeps its failure: the source's next lists fail at once with the same cause, naming their own request", async () => {
    const own = await sandbox();
    const requests: Array<{ endpoint: string; code?: string }> = [];
    const c = client(own, { onRequest: (info) => requests.push(info) });
    try {
      expect((await collect(c.pages({ basePath: '/v2', path: paths[0]! }))).length).toBeGreaterThan(0);
      const host = new URL(own.url).host;
      await own.close();
      requests.length = 0;
      const errors = [];
      for (const path of paths.slice(1)) errors.push(await failure(collect(c.pages({ basePath: '/v2', path }))));
      expect(errors.map((e) => [e.constructor.name, e.message, e.endpoint])).toEqual(
        paths.slice(1).map((path) => ['NetworkError', `GET /v2${path} page 1: cannot connect to ${host} (ECONNREFUSED)`, `/v2${path}`]),
      );
      expect(errors.every((e) => e.retryable === true)).toBe(true);
      // The first list tried as often as the retry policy allows; the others sent nothing.
      expect(requests.map((r) => r.endpoint)).toEqual(Array.from({ length: fast.retry!.attempts! }, () => `/v2${paths[1]}`));
    } finally {
      await c.close();
    }
  });
});

describe('FailedLogin', () => {
  it('keeps a shared failure for its time, forgets it after, and after a login that worked', () => {
    let now = 0;
    const kept = new FailedLogin(10_000, () => now);
    const refused = new NetworkError('POST /v2/auth/token/: cannot connect to h:443 (ECONNREFUSED)', { endpoint: '/v2/auth/token/', phase: 'connect' });
    kept.failed(refused);
    now = 9_999;
    expect(kept.current()).toBe(refused);
    now = 10_000;
    expect(kept.current()).toBeUndefined();
    kept.failed(refused);
    kept.succeeded();
    expect(kept.current()).toBeUndefined();
    // A failure another login might not meet is not kept.
    kept.failed(new Error('the login answer has no token'));
    expect(kept.current()).toBeUndefined();
  });
});

describe('RetryWarnings', () => {
  it("one warning per reason while it stands, the others at debug and counted in the reason's next warning", () => {
    const logs = captureLogs('debug');
    let now = 0;
    const warnings = new RetryWarnings(logs.logger, new QuietRepeats(60_000, () => now));
    const err = (where: string) => new NetworkError(`${where}: cannot connect to h:443 (ECONNREFUSED)`, { endpoint: '/x/', phase: 'connect' });
    const retry = (where: string) => ({ endpoint: '/x/', where, attempt: 1, attempts: 4, delayMs: 5 });
    for (const where of ['GET /a/ page 1', 'GET /b/ page 1', 'POST /v2/auth/token/']) warnings.retrying(err(where), retry(where));
    now = 60_000;
    warnings.retrying(err('GET /c/ page 1'), retry('GET /c/ page 1'));
    const lines = logs.lines.map((l) => JSON.parse(l) as { level: number; quietRepeats?: number });
    expect(lines.map((l) => l.level)).toEqual([40, 20, 20, 40]);
    expect(lines[3]!.quietRepeats).toBe(2);
  });
});
