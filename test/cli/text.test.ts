// The pure parts of the terminal output: exact cells, relative ages, and status lines that fit.
import { describe, expect, it } from 'vitest';
import { targetLines } from '../../src/cli/status/status-lines.ts';
import { cellText, terminalText } from '../../src/cli/output/terminal.ts';
import { formatAge } from '../../src/read/format-age.ts';
import type { TargetStatusRow } from '../../src/read/status-query.ts';

describe('cellText', () => {
  it('shows a value exactly: spaces at its ends, empty, line breaks and a leading quote are quoted', () => {
    expect(['APT', 'APT ', ' APT', '', 'a\nb', 'tab\there', '"quoted"', 'say "hi"', 'a  b'].map(cellText)).toEqual([
      'APT',
      '"APT "',
      '" APT"',
      '""',
      '"a\\nb"',
      '"tab\\there"',
      '"\\"quoted\\""',
      'say "hi"',
      'a  b',
    ]);
    expect([null, undefined, 0, 12].map(cellText)).toEqual(['', '', '0', '12']);
  });

  it('escapes controls, quoted or not', () => {
    expect(cellText('UN\u001b]0;x\u0007')).toBe('UN\\u001b]0;x\\u0007');
    expect(cellText(' \u009b31m\u202e')).toBe('" \\u009b31m\\u202e"');
    expect(terminalText('a\u001b[2Jb\nc\td')).toBe('a\\u001b[2Jb\nc\td');
  });
});

describe('formatAge', () => {
  const now = new Date('2026-11-25T12:00:00Z');
  it.each([
    ['2026-11-25T11:59:58Z', 'just now'],
    ['2026-11-25T11:59:18Z', '42 s ago'],
    ['2026-11-25T11:57:00Z', '3 min ago'],
    ['2026-11-25T07:00:00Z', '5 h ago'],
    ['2026-11-23T12:00:01Z', '47 h ago'],
    ['2026-11-13T12:00:00Z', '12 days ago'],
    ['2026-11-25T12:03:00Z', 'in 3 min'],
  ])('%s reads %s', (at, text) => expect(formatAge(at, now)).toBe(text));
  it('is empty without a time', () => expect(formatAge(null, now)).toBe(''));
});

describe('targetLines', () => {
  const now = new Date('2026-11-25T12:00:00Z');
  const row = (list_key: string, variant: string, last_status: string, last_error: string | null): TargetStatusRow => ({
    environment: 'production',
    list_key,
    variant,
    last_status,
    last_fetched_at: new Date('2026-11-25T11:57:00Z'),
    last_error,
    last_success_at: last_status === 'ok' ? new Date('2026-11-25T11:57:00Z') : new Date('2026-11-24T11:00:00Z'),
    last_change_at: new Date('2026-11-20T10:00:00Z'),
    current_entries: 123_456,
    impact_error: null,
    last_error_code: null,
    held_reason: null,
    nonconforming: 0,
    views_waiting: null,
  });
  const rows = [
    row('carrier_package_types', 'fedex', 'ok', null),
    row(
      'charge_line_item_categories',
      '',
      'unavailable',
      'GET /v2/shipments/charge-line-item-categories/ page 3: 503: the service is down for maintenance until further notice',
    ),
    row('hazmat', '', 'held', 'held: the fetch would remove 20 of 20 entries (more than 50%); run refsync sync --accept-removals to apply it'),
  ];

  it.each([80, 100, 120, 200])('at %i columns: a header and one line per target, none wider', (width) => {
    const lines = targetLines(rows, width, now);
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(width);
    expect(lines[1]).toMatch(/^carrier_package_types fedex +ok +3 min ago/);
    expect(lines[2]).toMatch(/^charge_line_item_categories +unavailable +3 min ago .*503: the service/);
    expect(lines[3]).toMatch(/^hazmat +held +3 min ago .*held: the fetch/);
  });

  it('keeps columns by importance: the reason before entries, entries before the last change and last ok', () => {
    const header = (width: number | undefined) => targetLines(rows, width, now)[0]!.split(/ {2,}/);
    expect(header(80)).toEqual(['list', 'status', 'fetched', 'reason']);
    expect(header(100)).toEqual(['list', 'status', 'fetched', 'entries', 'reason']);
    expect(header(120)).toEqual(['list', 'status', 'fetched', 'entries', 'changed', 'last ok', 'reason']);
    expect(header(undefined)).toEqual(['list', 'status', 'fetched', 'entries', 'changed', 'last ok', 'reason']);
    expect(targetLines(rows, 120, now)[3]).toMatch(/ 123456 +5 days ago +25 h ago +held: /);
  });

  it('without a width keeps the whole first line of each reason, without the request it concerns', () => {
    const lines = targetLines(rows, undefined, now);
    expect(lines[2]).toMatch(/ {2}503: the service is down for maintenance until further notice$/);
    expect(lines[3]).toMatch(/ {2}held: the fetch would remove 20 of 20 entries \(more than 50%\); run refsync sync --accept-removals to apply it$/);
  });
});
