// What failures of one cause share (src/util/failure-cause.ts): the host's failures without the
// request each list made, any other failure whole, since its endpoint may be its cause.
import { describe, expect, it } from 'vitest';
import { failingSection, type FailingTarget } from '../../src/server/failures-section.ts';
import { causeOf, sharedMessage } from '../../src/util/failure-cause.ts';

const refused = (path: string) => `GET /v2/shipments/${path}/ page 1: cannot connect to api.example.com:443 (ECONNREFUSED)`;

describe('causeOf and sharedMessage', () => {
  it('a failure of the host loses its request; a 500 or a broken answer keeps it; a message without one is itself', () => {
    expect(causeOf(refused('hazmat'), 'network')).toBe('cannot connect to api.example.com:443 (ECONNREFUSED)');
    expect(causeOf('POST /v2/auth/token/: connect to api.example.com:443 timed out', 'timeout')).toBe('connect to api.example.com:443 timed out');
    expect(causeOf('GET /v2/shipments/hazmat/ page 12: 500: boom', 'http_status')).toBe('GET /v2/shipments/hazmat/ page 12: 500: boom');
    expect(causeOf('TLS: certificate of api.example.com is not trusted', 'tls')).toBe('TLS: certificate of api.example.com is not trusted');
  });

  it('a group says its one message, or the cause its messages share', () => {
    expect(sharedMessage([refused('hazmat'), refused('hazmat')])).toBe(refused('hazmat'));
    expect(sharedMessage([refused('hazmat'), refused('piece-types')])).toBe('cannot connect to api.example.com:443 (ECONNREFUSED)');
  });
});

describe("the status page's Failing now", () => {
  it('lists whose host went away with a token in hand are one row, their cause said once', () => {
    const row = (list_key: string, path: string): FailingTarget => ({
      source: 'prod',
      source_name: 'prod',
      environment: 'production',
      list_key,
      variant: '',
      fetched_at: new Date('2026-11-28T09:00:00Z'),
      status: 'failed',
      error: refused(path),
      error_code: 'network',
      added: 0,
      removed: 0,
      modified: 0,
      reappeared: 0,
      reshaped: 0,
      entries: 10,
      last_ok_at: null,
      impact_error: null,
    });
    const html = String(failingSection([row('hazmat', 'hazmat'), row('piece_types', 'piece-types'), row('shipment_modes', 'shipment-modes')]));
    expect(html).toContain('3 lists: ');
    expect(html.split('ECONNREFUSED')).toHaveLength(2);
    expect(html).toContain('>cannot connect to api.example.com:443 (ECONNREFUSED)<');
  });
});
