// A first failure that leaves no mess: when every list fails for one reason (here the certificate
// the sandbox serves, untrusted without REFSYNC_CA_FILE), `refsync sync` says it once, in its report
// and in its log, rather than a row, a warning and an alert line per list.
import { beforeAll, describe, expect, it } from 'vitest';
import { RUN_REASON } from '../../src/cli/status/status-lines.ts';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';

const t = useTestDatabase();
let sb: Sandbox;

beforeAll(async () => {
  sb = await useSandbox();
});

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe('refsync sync when every list fails for one reason', () => {
  it('an untrusted certificate: one report line, one warning, one alert line; every list still has its failed snapshot and alert', async () => {
    const env = sandboxEnv(sb, { DATABASE_URL: t.url, REFSYNC_ENVIRONMENT: 'untrusted', LOG_LEVEL: 'info', REFSYNC_CA_FILE: '' });
    const res = await runCli(['sync'], { env });
    expect(res.code).toBe(1);
    const { rows } = await t.db.query<{ snapshots: number; alerts: number }>(
      `select (select count(*)::int from refdata.snapshots where environment = 'untrusted' and status = 'failed') as snapshots,
              (select count(*)::int from refdata.alerts where environment = 'untrusted' and kind = 'failed') as alerts`,
    );
    const lists = rows[0]!.snapshots;
    expect(lists).toBeGreaterThan(15);
    expect(rows[0]!.alerts).toBe(lists);
    const reason = 'is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE); set REFSYNC_CA_FILE to the CA that signed it';
    expect(res.stdout.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^failed +all ${lists} lists: TLS: certificate of 127\\.0\\.0\\.1:\\d+ ${reason.replace(/[()]/g, '\\$&')}$`)),
      `run 1 (untrusted): failed — 0 changed, 0 unchanged, 0 held, ${lists} failed, of ${lists} lists`,
      '',
    ]);
    const logLines = res.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logLines).toEqual([
      expect.objectContaining({ level: 40, code: 'tls', msg: `${lists} lists failed with the same error`, targets: expect.arrayContaining(['hazmat:']) }),
      expect.objectContaining({ level: 30, channel: 'log', msg: expect.stringMatching(new RegExp(`^${lists} lists failed to sync in untrusted: TLS: `)) }),
    ]);
    expect((logLines[0]!.targets as string[]).length).toBe(lists);
    expect(occurrences(res.stdout, reason)).toBe(1);
  });

  it('an unreachable host: one retry warning, one login for every list, one report line; status says the reason once', async () => {
    const env = sandboxEnv(sb, { DATABASE_URL: t.url, REFSYNC_ENVIRONMENT: 'unreachable', LOG_LEVEL: 'info', REFSYNC_BASE_URL: 'https://127.0.0.1:1' });
    const res = await runCli(['sync'], { env });
    expect(res.code).toBe(1);
    const reason = 'POST /v2/auth/token/: cannot connect to 127.0.0.1:1 (ECONNREFUSED)';
    const { rows } = await t.db.query<{ lists: number }>(
      `select count(*)::int as lists from refdata.snapshots where environment = 'unreachable' and status = 'failed'`,
    );
    const { lists } = rows[0]!;
    expect(lists).toBeGreaterThan(15);
    expect(res.stdout.split('\n')).toEqual([`failed      all ${lists} lists: ${reason}`, expect.stringMatching(/^run \d+ \(unreachable\): failed — /), '']);
    const logLines = res.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // One login for the source, not one per list after the one before it gave up, each with its retry warnings.
    expect(logLines).toEqual([
      expect.objectContaining({
        level: 40,
        component: 'upstream',
        attempt: 1,
        msg: expect.stringMatching(/^upstream request failed \(POST \/v2\/auth\/token\/: cannot connect/),
      }),
      expect.objectContaining({ level: 40, code: 'network', err: reason, msg: `${lists} lists failed with the same error` }),
      expect.objectContaining({ level: 30, channel: 'log', msg: `${lists} lists failed to sync in unreachable: ${reason}` }),
    ]);

    const status = await runCli(['status'], { env: { ...env, COLUMNS: '120' } });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`  ${lists} of ${lists} targets did not sync: all ${lists} lists failed: POST /v2/auth/token/:`);
    expect(occurrences(status.stdout, 'ECONNREFUSED')).toBe(1);
    expect(status.stdout).toMatch(new RegExp(`^hazmat +failed .* ${RUN_REASON}$`, 'm'));
  });

  it('lists that fail for different reasons keep a line each, after the lists that synced', async () => {
    sb.control.setFaults({ errorCount: 50, paths: ['hazmat', 'equipment_types'] });
    try {
      const env = sandboxEnv(sb, { DATABASE_URL: t.url, REFSYNC_ENVIRONMENT: 'partly', REFSYNC_LISTS: 'hazmat,shipment_modes,equipment_types' });
      const res = await runCli(['sync'], { env });
      expect(res.code).toBe(1);
      const lines = res.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^changed +shipment_modes /);
      expect(lines.slice(1, 3).sort()).toEqual([expect.stringMatching(/^failed +equipment_types .*500/), expect.stringMatching(/^failed +hazmat .*500/)]);
      expect(lines[3]).toMatch(/^run \d+ \(partly\): partial — 1 changed, 0 unchanged, 0 held, 2 failed, of 3 lists$/);
    } finally {
      sb.control.clearFaults();
    }
  });
});
