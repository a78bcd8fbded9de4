import { describe, expect, it } from 'vitest';
import { alertText, shortSummary, slackBody, type AlertRecord } from '../../src/alerts/format.ts';

const alert: AlertRecord = {
  id: 7,
  snapshotId: 3,
  runId: null,
  kind: 'used_code_changed',
  payload: {
    count: 2,
    more: 1,
    impact: [
      { column: 'public.shipments.charge_code', code: 'TON', change: 'removed', rows: 116, from: null, to: null, top: null },
      { column: 'public.shipments.charge_code', code: 'S<C', change: 'modified', rows: 39, from: null, to: null, top: null },
    ],
  },
  createdAt: new Date('2026-11-23T13:05:46Z'),
  retriesFrom: new Date('2026-11-23T13:05:46Z'),
  attempts: 0,
  environment: 'production',
  listKey: 'charge_codes',
  variant: '2024-06-11',
};

describe('a used_code_changed alert reads', () => {
  it('as one line naming each code in use, its change and its rows, with the rest counted', () => {
    expect(alertText(alert)).toBe(
      '2 charge codes in use changed in production (charge_codes, version 2024-06-11): TON removed: 116 rows in public.shipments.charge_code; S<C modified: 39 rows in public.shipments.charge_code; and 1 more',
    );
    expect(alertText(alert, 1)).toMatch(/TON removed: 116 rows in public\.shipments\.charge_code; and 2 more$/);
    expect(shortSummary(alert)).toBe('TON (116 rows), S<C (39 rows)');
    expect(JSON.parse(slackBody(alert)).text).toMatch(/^:dart: 2 charge codes in use changed .*`S&lt;C` modified/);
  });
});
