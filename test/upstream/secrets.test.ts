import { inspect } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { captureLogs } from '../helpers/logs.ts';
import { client, collect, failure, KEYED, sandbox, watchAuthorization } from './fixtures.ts';

let sb: Sandbox;
beforeAll(async () => {
  sb = await sandbox();
});
afterAll(async () => {
  await sb.close();
});

it('no password, token or API key in the logs (trace level, no redaction) or in any thrown error', async () => {
  const logs = captureLogs('trace');
  const sent = watchAuthorization();
  const errors: unknown[] = [];
  const keyed = { credentials: { email: KEYED.email, password: KEYED.password, apiKeyScheme: 'apikey' as const } };
  const c = client(sb, keyed, logs.logger);
  try {
    await c.me();
    // Re-logins on expiry, API-key fallback, retried 429/500/reset, then terminal failures of every kind.
    sb.control.setTokenLifetime({ requests: 2 });
    sb.control.requireApiKey(['hazmat']);
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: '0' }, errorCount: 1, resetBody: { count: 1 }, paths: ['shipment_modes'] });
    await collect(c.pages({ basePath: '/v2', path: '/shipments/shipment-modes/' }));
    await collect(c.pages({ basePath: '/v2', path: '/shipments/hazmat/' }));
    sb.control.setGenerated('nmfc_codes', 50);
    sb.control.setPaging('nmfc_codes', 'next');
    await collect(c.pages({ basePath: '/v2', path: '/shipments/nmfc/' }));
    sb.control.setFaults({ unauthorizedOnPage: { page: 1, count: 10 }, paths: ['service_levels'] });
    errors.push(await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/service-levels/' }))));
    sb.control.clearFaults();
    sb.control.setFaults({ errorCount: 10, paths: ['piece_types'] });
    errors.push(await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/piece-types/' }))));
    sb.control.clearFaults();
    sb.control.setFaults({ html: { count: 1 }, paths: ['piece_types'] });
    errors.push(await failure(collect(c.pages({ basePath: '/v2', path: '/shipments/piece-types/' }))));
  } finally {
    await c.close();
    sent.stop();
  }
  const wrong = client(sb, { credentials: { email: KEYED.email, password: 'Wrong-Password-123', apiKeyScheme: 'apikey' } }, logs.logger);
  const wrongKey = client(sb, { credentials: { apiKey: 'Wrong-Key-456789', apiKeyScheme: 'basic' } }, logs.logger);
  try {
    errors.push(await failure(wrong.me()));
    errors.push(await failure(wrongKey.me()));
  } finally {
    await wrong.close();
    await wrongKey.close();
  }

  const tokens = [...sent.values].filter((v) => /^[0-9a-f]{40}$/.test(v));
  expect(tokens.length).toBeGreaterThan(2); // several logins really happened
  const secrets = [KEYED.password, KEYED.apiKey, 'Wrong-Password-123', 'Wrong-Key-456789', ...sent.values];
  expect(logs.lines.length).toBeGreaterThan(5);
  expect(logs.text()).toMatch(/retrying/);
  const errorText = errors.map((e) => `${inspect(e, { depth: 10, showHidden: true })}\n${JSON.stringify(e)}\n${String(e)}`).join('\n');
  expect(errors.map((e) => (e as { code: string }).code)).toEqual(['auth', 'http_status', 'protocol', 'auth', 'auth']);
  for (const secret of secrets) {
    expect(logs.text().includes(secret), `log contains a secret`).toBe(false);
    expect(errorText.includes(secret), `error contains a secret`).toBe(false);
    expect(logs.text().includes(Buffer.from(`${secret}:`).toString('base64'))).toBe(false);
  }
  expect(errorText).not.toMatch(/authorization['"]?\s*[:=]/i);
});
