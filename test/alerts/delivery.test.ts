import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookStatus } from '../../src/alerts/status.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { captureLogs } from '../helpers/logs.ts';
import { alertsOf, drainWithTestDispatcher, newSecret, sleep, testDispatcher, useAlertFixtures, VERSION, webhookEnv, type AlertFixture } from './fixture.ts';
import { startReceiver } from './receiver.ts';

const t = useTestDatabase();
const files = useAlertFixtures(t, 'Z');

/** Baseline sync, then one new charge code in the sandbox and a second sync: one `added` alert. */
async function newCodeAlert(extra: Record<string, string>, description = 'Alert test code'): Promise<{ fx: AlertFixture; code: string }> {
  const fx = files.fixture(extra);
  await fx.sync();
  const code = files.addCode(description);
  await fx.sync();
  return { fx, code };
}

describe('alert delivery', () => {
  it('a new charge code gives one alert, delivered once, signed per Standard Webhooks, and logged', async () => {
    const receiver = await startReceiver();
    const secret = newSecret();
    const { fx, code } = await newCodeAlert(webhookEnv(receiver, { REFSYNC_WEBHOOK_SECRET: secret }));
    const env = fx.source.environment;

    const before = await alertsOf(t.db, env);
    expect(before.map((a) => [a.kind, a.state])).toEqual([['added', 'pending']]);

    const logs = captureLogs('info');
    const events: string[] = [];
    const dispatcher = testDispatcher(t.db, fx.config, receiver.caPem, {
      logger: logs.logger,
      onAlert: (e) => events.push(`${e.outcome} ${e.webhookId} ${e.text}`),
    });
    try {
      expect(await dispatcher.drainOnce()).toMatchObject({ delivered: 1, failed: 0, dead: 0, skipped: 0 });
      expect(await dispatcher.drainOnce()).toMatchObject({ delivered: 0, failed: 0 });
    } finally {
      await dispatcher.stop();
    }

    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(events).toEqual([
      `delivered ${String(req.headers['webhook-id'])} 1 charge code added in ${env} (charge_codes, version ${VERSION}): ${code} — Alert test code`,
    ]);
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['webhook-id']).toMatch(new RegExp(`^msg_refsync_${env}_${before[0]!.id}_`));
    const verified = new Webhook(secret).verify(req.body, {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    }) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(verified.type).toBe('refdata.added');
    expect(Number.isNaN(Date.parse(verified.timestamp))).toBe(false);
    expect(verified.data).toMatchObject({
      kind: 'added',
      environment: env,
      list_key: 'charge_codes',
      variant: VERSION,
      count: 1,
      more: 0,
      entries: [{ entry_key: code, code, description: 'Alert test code' }],
    });
    // A wrong secret does not verify.
    expect(() => new Webhook(newSecret()).verify(req.body, req.headers as Record<string, string>)).toThrow();

    const [after] = await alertsOf(t.db, env);
    expect(after).toMatchObject({ state: 'delivered', attempts: 1, last_error: null });
    expect(after!.delivered_at).not.toBeNull();

    const text = logs.text();
    expect(text).toContain(`1 charge code added in ${env} (charge_codes, version ${VERSION}): ${code} — Alert test code`);
    expect(text).not.toContain('"digest"');
    expect(text).toContain(`"codes":["${code}"]`);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice('whsec_'.length));
    expect(text).not.toContain('/hook');
  });

  it('a receiver that is down, then up, gets the same webhook-id; the alert is marked delivered once', async () => {
    const receiver = await startReceiver();
    const { fx } = await newCodeAlert(webhookEnv(receiver));
    await receiver.stop();
    const dispatcher = testDispatcher(t.db, fx.config, receiver.caPem);
    try {
      expect(await dispatcher.drainOnce()).toMatchObject({ delivered: 0, failed: 1 });
      const [failed] = await alertsOf(t.db, fx.source.environment);
      expect(failed).toMatchObject({ state: 'pending', attempts: 1 });
      expect(failed!.last_error).toMatch(/ECONNREFUSED|refused/);

      // Still down: a 503 answer, then a good one.
      await receiver.start();
      receiver.respond = () => ({ status: 503, body: 'maintenance' });
      await sleep(20);
      expect(await dispatcher.drainOnce()).toMatchObject({ failed: 1 });
      expect((await alertsOf(t.db, fx.source.environment))[0]!.last_error).toBe('HTTP 503: maintenance');
      receiver.respond = () => ({ status: 200, body: 'ok' });
      await sleep(20);
      expect(await dispatcher.drainOnce()).toMatchObject({ delivered: 1 });
      await sleep(20);
      expect(await dispatcher.drainOnce()).toMatchObject({ delivered: 0, failed: 0 });
    } finally {
      await dispatcher.stop();
    }
    expect(receiver.requests).toHaveLength(2);
    const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const [row] = await alertsOf(t.db, fx.source.environment);
    expect(row).toMatchObject({ state: 'delivered', attempts: 3, last_error: null });
  });

  it('a receiver that fails them alike: the failed attempts of one drain are one warning with their count', async () => {
    const receiver = await startReceiver();
    receiver.respond = () => ({ status: 500, body: 'boom' });
    const { fx } = await newCodeAlert(webhookEnv(receiver));
    files.addCode('Second alert code');
    await fx.sync();
    const logs = captureLogs('info');
    expect(await drainWithTestDispatcher(t.db, fx.config, receiver.caPem, { logger: logs.logger })).toMatchObject({ failed: 2 });
    const warnings = logs.lines.map((l) => JSON.parse(l) as { level: number; alertIds?: number[] }).filter((l) => l.level === 40);
    expect(warnings).toEqual([expect.objectContaining({ msg: '2 alert deliveries failed; will retry', count: 2, err: 'HTTP 500: boom' })]);
    const ids = (await alertsOf(t.db, fx.source.environment)).map((a) => Number(a.id));
    expect(warnings[0]!.alertIds).toEqual(ids);
  });

  it('gives up after the last attempt: dead, with the last error', async () => {
    const receiver = await startReceiver();
    receiver.respond = () => ({ status: 500, body: 'boom' });
    const { fx } = await newCodeAlert(webhookEnv(receiver));
    const dispatcher = testDispatcher(t.db, fx.config, receiver.caPem, { retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 3 } });
    const totals = { failed: 0, dead: 0 };
    try {
      for (let i = 0; i < 10 && totals.dead === 0; i++) {
        const r = await dispatcher.drainOnce();
        totals.failed += r.failed;
        totals.dead += r.dead;
        await sleep(10);
      }
    } finally {
      await dispatcher.stop();
    }
    expect(totals).toEqual({ failed: 2, dead: 1 });
    expect(receiver.requests).toHaveLength(3);
    const [row] = await alertsOf(t.db, fx.source.environment);
    expect(row).toMatchObject({ state: 'dead', attempts: 3, last_error: 'gave up after 3 attempts: HTTP 500: boom' });
  });

  it('410 Gone disables the endpoint: the alert is disabled, later alerts are not sent, status shows it', async () => {
    const receiver = await startReceiver();
    receiver.respond = () => ({ status: 410 });
    const { fx } = await newCodeAlert(webhookEnv(receiver));
    const logs = captureLogs('info');
    const dispatcher = testDispatcher(t.db, fx.config, receiver.caPem, { logger: logs.logger });
    try {
      expect(await dispatcher.drainOnce()).toMatchObject({ disabled: 1, delivered: 0, failed: 0 });
      files.addCode('After 410', 'other');
      await fx.sync();
      expect(await dispatcher.drainOnce()).toMatchObject({ disabled: 1, delivered: 0 });
    } finally {
      await dispatcher.stop();
    }
    expect(receiver.requests).toHaveLength(1);
    const rows = await alertsOf(t.db, fx.source.environment);
    expect(rows.map((r) => r.state)).toEqual(['disabled', 'disabled']);
    const status = await webhookStatus(t.db);
    const mine = status.find((s) => s.url.startsWith(`https://localhost:${receiver.port}/`));
    expect(mine).toBeDefined();
    expect(mine!.disabledAt).toBeInstanceOf(Date);
    expect(mine!.reason).toMatch(/410 Gone/);
    // The endpoint is named without its path: a webhook URL's path may be its credential.
    expect(mine!.url).not.toContain('/hook');
    expect(logs.text()).toMatch(/webhook endpoint disabled/);
  });

  it('a redirect is not followed: the target receives nothing, the attempt fails', async () => {
    const target = await startReceiver('/elsewhere');
    const receiver = await startReceiver();
    receiver.respond = () => ({ status: 302, headers: { location: target.url } });
    const { fx } = await newCodeAlert(webhookEnv(receiver));
    expect(await drainWithTestDispatcher(t.db, fx.config, receiver.caPem)).toMatchObject({ failed: 1, delivered: 0 });
    expect(receiver.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
    const [row] = await alertsOf(t.db, fx.source.environment);
    expect(row).toMatchObject({ state: 'pending', attempts: 1 });
    expect(row!.last_error).toMatch(/^HTTP 302: redirect to https:\/\/localhost:\d+\/…#[0-9a-f]+ not followed/);
  });

  it('a Retry-After longer than the backoff is honoured: the next attempt is scheduled after it', async () => {
    const receiver = await startReceiver();
    receiver.respond = () => ({ status: 503, headers: { 'retry-after': '600' } });
    const { fx } = await newCodeAlert(webhookEnv(receiver));
    // A backoff of about 1 ms, capped at an hour: only the Retry-After can push the attempt 10 minutes out.
    expect(await drainWithTestDispatcher(t.db, fx.config, receiver.caPem, { retry: { baseDelayMs: 1, maxDelayMs: 3_600_000 } })).toMatchObject({
      failed: 1,
      delivered: 0,
    });
    const { rows } = await t.db.query<{ state: string; wait_s: number }>(
      'select state, extract(epoch from next_attempt_at - clock_timestamp())::float8 as wait_s from refdata.alerts where environment = $1',
      [fx.source.environment],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.state).toBe('pending');
    expect(rows[0]!.wait_s).toBeGreaterThan(500);
    expect(rows[0]!.wait_s).toBeLessThanOrEqual(600);
  });

  it.each([['127.0.0.1'], ['localhost']])('a private address (%s) is refused without allowPrivate; nothing reaches the receiver', async (host) => {
    const receiver = await startReceiver();
    const url = receiver.url.replace('localhost', host);
    const { fx } = await newCodeAlert({ REFSYNC_WEBHOOK_URL: url, REFSYNC_WEBHOOK_SECRET: newSecret() });
    expect(fx.source.webhook?.allowPrivate).toBe(false);
    expect(await drainWithTestDispatcher(t.db, fx.config, receiver.caPem)).toMatchObject({ failed: 1, delivered: 0 });
    expect(receiver.requests).toHaveLength(0);
    const [row] = await alertsOf(t.db, fx.source.environment);
    expect(row!.state).toBe('pending');
    expect(row!.last_error).toMatch(/refused: .*127\.0\.0\.1 is loopback/);
  });

  it('Slack format: readable text naming the codes', async () => {
    const receiver = await startReceiver();
    const { fx, code } = await newCodeAlert({ ...webhookEnv(receiver), REFSYNC_WEBHOOK_FORMAT: 'slack' }, 'Sort <and> segregate');
    expect(await drainWithTestDispatcher(t.db, fx.config, receiver.caPem)).toMatchObject({ delivered: 1 });
    const body = JSON.parse(receiver.requests[0]!.body) as { text: string };
    // The upstream's code and description in code spans, where Slack neither formats nor links.
    expect(body.text).toBe(
      `:new: 1 charge code added in ${fx.source.environment} (charge_codes, version ${VERSION}): \`${code}\` — \`Sort &lt;and&gt; segregate\``,
    );
  });

  it('a source without a webhook: the alert is logged as a short line (kind, list, counts, its code) and marked skipped', async () => {
    const { fx, code } = await newCodeAlert({});
    const logs = captureLogs('info');
    expect(await drainWithTestDispatcher(t.db, fx.config, '', { logger: logs.logger })).toMatchObject({ skipped: 1 });
    expect((await alertsOf(t.db, fx.source.environment)).map((r) => r.state)).toEqual(['skipped']);
    const line = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => (l.alert as { kind?: string } | undefined)?.kind === 'added');
    expect(line).toMatchObject({ level: 30, channel: 'log', alert: { kind: 'added', listKey: 'charge_codes', count: 1, codes: [code] } });
    expect(line!.alert).not.toHaveProperty('digest');
  });

  it('a sync that adds 300 codes logs one bounded line naming a handful of them; the digest stays in the outbox', async () => {
    const fx = files.fixture({});
    await fx.sync();
    const codes = Array.from({ length: 300 }, () => files.addCode(`A rather long description of a code that nobody will read in a log ${'x'.repeat(60)}`));
    await fx.sync();
    const logs = captureLogs('info');
    expect(await drainWithTestDispatcher(t.db, fx.config, '', { logger: logs.logger })).toMatchObject({ skipped: 1 });
    const lines = logs.lines.filter((l) => l.includes('"kind":"added"'));
    expect(lines).toHaveLength(1);
    expect(Buffer.byteLength(lines[0]!)).toBeLessThan(1024);
    const named = codes.filter((c) => lines[0]!.includes(`"${c}"`) || lines[0]!.includes(` ${c} `) || lines[0]!.includes(`${c},`));
    expect(named.length).toBeGreaterThan(0);
    expect(named.length).toBeLessThanOrEqual(5);
    expect(JSON.parse(lines[0]!)).toMatchObject({ alert: { count: 300 } });
    const [row] = await t.db
      .query<{ n: number }>(
        `select jsonb_array_length(payload->'entries') n from refdata.alerts a join refdata.snapshots s on s.id = a.snapshot_id where s.environment = $1 and a.kind = 'added'`,
        [fx.source.environment],
      )
      .then((r) => r.rows);
    expect(row!.n).toBeGreaterThan(5);
  });
});
