import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

// A configuration that passes validation on its own, so each case below fails for one reason.
const base = { REFSYNC_BASE_URL: 'https://api.vendor.example', REFSYNC_API_KEY: 'key-secret-1', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
const dir = testTempDir('refsync-exit');

describe('bad settings and arguments at the command line', () => {
  it.each([
    ['LOG_LEVEL=verbose', ['sync'], { LOG_LEVEL: 'verbose' }, /^refsync: LOG_LEVEL: 'verbose' is not a log level; one of: .*\n$/],
    ['LOG_LEVEL=verbose, sandbox', ['sandbox', '--port', '0'], { LOG_LEVEL: 'verbose' }, /^refsync: LOG_LEVEL: 'verbose' is not a log level/],
    [
      'a schedule out of range',
      ['worker'],
      { REFSYNC_SCHEDULE: '99 99 * * *' },
      /^refsync: REFSYNC_SCHEDULE: '99 99 \* \* \*' — Constraint error, got value 99 expected range 0-59 \(in time zone UTC\)\n$/,
    ],
    ['a fraction over 1', ['sync'], { REFSYNC_MAX_REMOVED_FRACTION: '1.5' }, /^refsync: REFSYNC_MAX_REMOVED_FRACTION: '1.5' — must be at most 1\n$/],
    ['an unknown option', ['trigger', '--bogus'], {}, /^refsync: trigger: Unknown option '--bogus'/],
    [
      'a writable dashboard without a password',
      ['worker'],
      { REFSYNC_DASHBOARD_WRITE: 'true' },
      /^refsync: REFSYNC_DASHBOARD_WRITE: is true, but REFSYNC_DASHBOARD_PASSWORD is not set; a dashboard that can change the queue needs a password\n$/,
    ],
    ['a deadline that is not a number', ['sync'], { REFSYNC_TARGET_DEADLINE_S: 'later' }, /^refsync: REFSYNC_TARGET_DEADLINE_S: 'later' — /],
    [
      'an unknown schema policy',
      ['sync'],
      { REFSYNC_SCHEMA_CHANGES: 'yolo' },
      /^refsync: REFSYNC_SCHEMA_CHANGES: 'yolo' — must be one of: evolve, hold-breaking, freeze\n$/,
    ],
    [
      'a schema policy for no list',
      ['sync'],
      { REFSYNC_SCHEMA_CHANGES: '{"*": "freeze", "shipment_mode": "evolve"}' },
      /^refsync: REFSYNC_SCHEMA_CHANGES: 'shipment_mode' is not a list key \(did you mean shipment_modes\? one of: accessorials, .*\) nor '\*'\n$/,
    ],
    [
      'a schema policy per list that is not one',
      ['sync'],
      { REFSYNC_SCHEMA_CHANGES: '{"hazmat": "lenient"}' },
      /^refsync: REFSYNC_SCHEMA_CHANGES\.hazmat: 'lenient' — must be one of: evolve, hold-breaking, freeze\n$/,
    ],
    ['sync --accept-schema without --list', ['sync', '--accept-schema'], {}, /^refsync: sync: --accept-schema needs --list KEY/],
    ['trigger --accept-schema without --list', ['trigger', '--accept-schema'], {}, /^refsync: trigger: --accept-schema needs --list KEY/],
  ])('%s exits 2 with one line naming it', async (_name, args, env, message) => {
    const res = await runCli(args, { env: { ...base, ...env }, cwd: dir });
    expect(res.stderr).toMatch(message);
    expect(res.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(res.stderr).not.toContain('key-secret-1');
    expect(res.code).toBe(2);
  });

  it('warns about a misspelt REFSYNC_* variable with the closest name, and goes on', async () => {
    const out = join(dir, 'sources.yml');
    const res = await runCli(['export-dbt', '--out', out], { env: { REFSYNC_LIST: 'charge_codes' }, cwd: dir });
    expect(res.stderr).toBe('refsync: warning: REFSYNC_LIST is not a setting refsync knows; did you mean REFSYNC_LISTS?\n');
    expect(res.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('sources:');
  });
});
