import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { restrictedReason } from '../../src/alerts/address.ts';
import { createAlertDispatcher } from '../../src/alerts/dispatcher.ts';
import { endpointLabel, webhookId } from '../../src/alerts/endpoint.ts';
import { alertText, shortSummary, slackBody, standardBody, type AlertRecord } from '../../src/alerts/format.ts';
import { newWebhookSecret, signWebhook, webhookKey } from '../../src/alerts/sign.ts';
import { ConfigError } from '../../src/config/errors.ts';
import type { AppConfig, SourceConfig } from '../../src/config/types.ts';
import type { Database } from '../../src/db/database.ts';
import { silentLogger } from '../../src/util/logger.ts';

describe('SSRF guard', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['[::1]', 'loopback'],
  ])('%s is refused (%s)', (address, reason) => {
    expect(restrictedReason(address)).toBe(reason);
  });

  it.each([['8.8.8.8'], ['172.32.0.1'], ['100.128.0.1'], ['2606:4700:4700::1111'], ['::ffff:8.8.8.8']])('%s is public', (address) => {
    expect(restrictedReason(address)).toBeNull();
  });
});

describe('signing', () => {
  it('matches the standardwebhooks library for a whsec_ secret', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const key = webhookKey(secret)!;
    const body = '{"type":"refdata.added"}';
    const ts = 1_700_000_000;
    expect(signWebhook(key, 'msg_1', ts, body)).toBe(new Webhook(secret).sign('msg_1', new Date(ts * 1000), body));
  });

  it('a secret from `refsync webhook-secret` is fresh, 32 bytes, and signs as the standardwebhooks library does', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhookKey(secret)).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
    expect(signWebhook(webhookKey(secret)!, 'msg_1', 1_700_000_000, '{}')).toBe(new Webhook(secret).sign('msg_1', new Date(1_700_000_000_000), '{}'));
  });

  it('refuses secrets that are not base64', () => {
    expect(webhookKey('whsec_')).toBeUndefined();
    expect(webhookKey('not base64!')).toBeUndefined();
    expect(webhookKey('c2VjcmV0')).toEqual(Buffer.from('secret'));
  });

  it('a bad secret or a plain-http URL is a configuration error naming the setting, without the secret', () => {
    const source = (webhook: SourceConfig['webhook']) => ({ name: 's', environment: 's', webhook }) as SourceConfig;
    const make = (s: SourceConfig) => () => createAlertDispatcher({ db: {} as Database, config: { sources: [s] } as AppConfig, logger: silentLogger });
    expect(make(source({ url: 'https://hooks.example.com/x', secret: 'my-secret!', format: 'json', allowPrivate: false }))).toThrow(
      new ConfigError(
        "REFSYNC_WEBHOOK_SECRET (source s): must be a Standard Webhooks secret, 'whsec_' followed by base64; make one with `refsync webhook-secret`",
      ),
    );
    expect(make(source({ url: 'http://hooks.example.com/x', format: 'json', allowPrivate: false }))).toThrow(
      /REFSYNC_WEBHOOK_URL .*must be https:\/\/; http:\/\/ is allowed only with REFSYNC_WEBHOOK_ALLOW_PRIVATE=true/,
    );
  });
});

describe('names', () => {
  it('an endpoint is named by its origin and a hash, never its path or query', () => {
    const label = endpointLabel('https://hooks.slack.com/services/T000/B000/XXXXSECRET?token=abc');
    expect(label).toMatch(/^https:\/\/hooks\.slack\.com\/…#[0-9a-f]{12}$/);
    expect(endpointLabel('https://hooks.example.com')).toBe('https://hooks.example.com');
    expect(endpointLabel('https://a.example/x')).not.toBe(endpointLabel('https://a.example/y'));
  });

  it('webhook ids are stable per alert and carry the environment', () => {
    const createdAt = new Date('2025-01-02T03:04:05.678Z');
    expect(webhookId({ id: 42, environment: 'production', createdAt })).toBe(`msg_refsync_production_42_${createdAt.getTime().toString(36)}`);
    expect(webhookId({ id: 42, environment: 'EU prod', createdAt })).toMatch(/^msg_refsync_EU-prod-[0-9a-f]{8}_42_/);
  });
});

describe('formats', () => {
  const alert = (kind: string, payload: Record<string, unknown>, listKey = 'charge_codes', variant = '2024-06-11'): AlertRecord => ({
    id: 7,
    snapshotId: kind === 'run_completed' ? null : 3,
    runId: kind === 'run_completed' ? 12 : null,
    kind,
    payload,
    createdAt: new Date('2025-01-01T00:00:00Z'),
    retriesFrom: new Date('2025-01-01T00:00:00Z'),
    attempts: 1,
    environment: 'production',
    listKey,
    variant,
  });
  const entries = Array.from({ length: 3 }, (_, i) => ({ entry_key: `C${i}`, code: `C${i}`, description: `Code ${i}` }));

  it('Slack: the count, the list, the codes and "and N more"', () => {
    const body = JSON.parse(slackBody(alert('added', { count: 5, entries, more: 2 }))) as { text: string };
    expect(body.text).toBe(
      ':new: 5 charge codes added in production (charge_codes, version 2024-06-11): `C0` — `Code 0`; `C1` — `Code 1`; `C2` — `Code 2`; and 2 more',
    );
    expect(alertText(alert('removed', { count: 1, entries: [entries[0]] }, 'shipment_statuses', ''))).toBe(
      '1 shipment status removed in production (shipment_statuses): C0 — Code 0',
    );
    expect(alertText(alert('failed', { status: 'failed', error: 'HTTP 500' }, 'carrier_package_types', 'ups'))).toBe(
      'carrier package types failed to sync in production (carrier_package_types, carrier ups): HTTP 500',
    );
    expect(alertText(alert('schema_changed', { fields_added: ['x'], fields_removed: ['y'] }, 'hazmat', ''))).toBe(
      'hazmat changed shape in production (hazmat): fields added: x; fields removed: y',
    );
    const columns = [
      { field: 'x', column: 'x', change: 'added', to: 'boolean' },
      { field: 'Id', column: 'id', change: 'widened', from: 'bigint', to: 'text' },
    ];
    expect(alertText(alert('schema_changed', { fields_added: ['x:boolean'], fields_removed: [], columns }, 'hazmat', ''))).toBe(
      'hazmat changed shape in production (hazmat): fields added: x:boolean; view columns: +x boolean, id bigint→text',
    );
    expect(alertText(alert('held', { message: 'held: too many removals' }))).toContain('charge codes update held in production');
  });

  it('nonconforming, a schema hold, a wait for views and reshaped entries read as what they are', () => {
    const misfits = [
      { entry_key: '53FT', code: '53FT', column: 'length_ft', value: '26-28' },
      { entry_key: 'REEF', code: 'REEF', column: 'is_reefer', value: 'yes' },
    ];
    const odd = alert('nonconforming', { count: 3, entries: misfits, more: 1 }, 'equipment_types', '');
    expect(alertText(odd)).toBe(
      '3 values of equipment types not fitting their column\'s type in production (equipment_types): 53FT length_ft "26-28"; REEF is_reefer "yes"; and 1 more',
    );
    expect(shortSummary(odd)).toBe('53FT.length_ft, REEF.is_reefer');
    const schemaDiff = [
      { field: 'is_charge_code', column: 'is_charge_code', change: 'widened', from: 'boolean', to: 'jsonb' },
      { field: 'x', column: 'x', change: 'gone', from: 'text' },
    ];
    const held = alert('held', {
      reason: 'schema',
      policy: 'hold-breaking',
      schema_diff: schemaDiff,
      message: 'held by schema policy hold-breaking: is_charge_code: boolean → jsonb',
    });
    expect(shortSummary(held)).toBe('schema: is_charge_code boolean→jsonb, x gone');
    expect(alertText(held)).toContain('update held in production (charge_codes, version 2024-06-11): held by schema policy hold-breaking');
    const waiting = alert(
      'schema_changed',
      { fields_added: [], fields_removed: [], columns: [], reshaped: 4, views_waiting: { message: 'the column change id bigint → text waits: …' } },
      'hazmat',
      '',
    );
    expect(alertText(waiting)).toBe(
      'hazmat changed shape in production (hazmat): 4 entries reshaped (not counted as modified); the column change id bigint → text waits: …',
    );
    const applied = alert(
      'schema_changed',
      { fields_added: [], fields_removed: [], columns: [], applied_after_wait: [{ column: 'id', change: 'widened', from: 'bigint', to: 'text' }] },
      'hazmat',
      '',
    );
    expect(alertText(applied)).toBe("hazmat changed shape in production (hazmat): applied after waiting for the views' dependents: id bigint→text");
  });

  it('Standard Webhooks body and the CLI summary', () => {
    const a = alert('added', { count: 8, entries, more: 5 });
    expect(JSON.parse(standardBody(a))).toEqual({ type: 'refdata.added', timestamp: '2025-01-01T00:00:00.000Z', data: a.payload });
    expect(shortSummary(a)).toBe('C0, C1, C2 +5 more');
  });

  it('run_completed: the run, its outcome and its lists counted by outcome', () => {
    const lists = [{ status: 'changed' }, { status: 'unchanged' }, { status: 'unchanged' }, { status: 'held' }];
    const run = alert('run_completed', { run_id: 12, source: 'acme', status: 'partial', targets_done: 4, targets_total: 4, lists }, '', '');
    expect(alertText(run)).toBe('run 12 of acme (production) partial: 4 of 4 lists (1 changed, 2 unchanged, 1 held)');
    expect(JSON.parse(slackBody(run)).text).toBe(':checkered_flag: run 12 of acme (production) partial: 4 of 4 lists (1 changed, 2 unchanged, 1 held)');
    expect(JSON.parse(standardBody(run))).toMatchObject({ type: 'refdata.run_completed', data: { run_id: 12, lists } });
    expect(shortSummary(run)).toBe('run 12 partial: 1 changed, 2 unchanged, 1 held');
  });
});
