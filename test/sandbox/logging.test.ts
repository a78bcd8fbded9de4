import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SANDBOX_KEYED_ACCOUNT, SANDBOX_MACHINE_ACCOUNT, sandboxControlHttp, sandboxLogin, sandboxRequest, useSandbox } from '../helpers/sandbox.ts';

describe('sandbox logging', () => {
  it('logs every response at debug (method, path, status, ms) and never a credential', async () => {
    const lines: string[] = [];
    // No redaction configured: a secret in these lines would have been logged by the sandbox itself.
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const sb = await useSandbox({ logger, controlSecret: 'log-test-secret' });
    const token = await sandboxLogin(sb);
    await sandboxRequest(sb, '/v2/auth/me/', { headers: { authorization: `Token ${token}` } });
    await sandboxRequest(sb, '/v2/shipments/hazmat/', { headers: { authorization: `APIkey ${SANDBOX_KEYED_ACCOUNT.apiKey}` } });
    await sandboxRequest(sb, '/v2/auth/me/');
    await sandboxControlHttp(sb, 'clearFaults');
    // A response is logged on its 'close' event, which may come just after the client has it.
    const responses = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.msg === 'sandbox response');
    for (let i = 0; i < 100 && responses().length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    const records = responses();
    expect(records.map((r) => [r.method, r.path, r.status])).toEqual([
      ['POST', '/v2/auth/token/', 200],
      ['GET', '/v2/auth/me/', 200],
      ['GET', '/v2/shipments/hazmat/', 200],
      ['GET', '/v2/auth/me/', 401],
    ]);
    for (const r of records) {
      expect(r.level).toBe(20);
      expect(typeof r.ms).toBe('number');
    }
    const all = lines.join('');
    for (const secret of [token, SANDBOX_MACHINE_ACCOUNT.password, SANDBOX_KEYED_ACCOUNT.apiKey as string, 'log-test-secret']) {
      expect(all).not.toContain(secret);
    }
  });
});
