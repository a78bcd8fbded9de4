import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { catalog } from '../../src/catalog/catalog.ts';
import { runCli } from '../helpers/cli.ts';
import { createUnmigratedDatabase, dropTestDatabase, useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';

const t = useTestDatabase();
let sb: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await useSandbox();
  env = sandboxEnv(sb, { DATABASE_URL: t.url, REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,2025-09-01', LOG_LEVEL: 'error' });
});

describe('refsync sync', () => {
  it('syncs every list and reports it as JSON, exit 0', async () => {
    const res = await runCli(['sync', '--json'], { env });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { runs: { status: string; targets: { list_key: string; status: string }[] }[] };
    expect(out.runs).toHaveLength(1);
    expect(out.runs[0]!.status).toBe('succeeded');
    expect(new Set(out.runs[0]!.targets.map((x) => x.list_key))).toEqual(new Set(catalog.map((l) => l.key)));
    expect(out.runs[0]!.targets.every((x) => x.status === 'changed')).toBe(true);
  });

  it('prints a progress line per target and a summary on a terminal', async () => {
    const res = await runCli(['sync', '--list', 'shipment_modes', '--list', 'charge_codes'], { env });
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines.filter((l) => /^unchanged\s+(shipment_modes|charge_codes)/.test(l))).toHaveLength(3);
    expect(lines.at(-1)).toMatch(/^run \d+ \(sandbox\): succeeded — 0 changed, 3 unchanged/);
  });

  it('exits 1 when a list fails, still writing the others', async () => {
    sb.control.addEntry('shipment_modes', { code: 'SPACE', description: 'Orbital' });
    sb.control.setFaults({ errorCount: 50, paths: ['hazmat'] });
    try {
      const res = await runCli(['sync', '--json', '--list', 'hazmat,shipment_modes'], { env });
      expect(res.code).toBe(1);
      const targets = JSON.parse(res.stdout).runs[0].targets as { list_key: string; status: string; error: string | null }[];
      expect(targets.find((x) => x.list_key === 'hazmat')!.status).toBe('failed');
      expect(targets.find((x) => x.list_key === 'shipment_modes')!.status).toBe('changed');
      const { rows } = await t.db.query("select 1 from refdata.shipment_modes where code = 'SPACE'");
      expect(rows).toHaveLength(1);
    } finally {
      sb.control.clearFaults();
    }
  });

  it('refuses bad arguments and bad configuration with one line and exit 2', async () => {
    for (const [args, extra, pattern] of [
      [['sync', '--list', 'bogus'], {}, /--list 'bogus' is not a list key \(one of: accessorials, /],
      [['sync', '--list', 'shipment_modes,acessorials'], {}, /--list 'acessorials' is not a list key \(did you mean accessorials\? one of: /],
      [['sync', '--frobnicate'], {}, /Unknown option '--frobnicate'/],
      [['sync'], { REFSYNC_BASE_URL: sb.url.replace('https:', 'http:') }, /REFSYNC_BASE_URL: .*plain http:\/\/ is refused/],
      [['sync'], { REFSYNC_PASSWORD_FILE: '/etc/hostname' }, /REFSYNC_PASSWORD and REFSYNC_PASSWORD_FILE are both set/],
      [['sync'], { NODE_TLS_REJECT_UNAUTHORIZED: '0' }, /NODE_TLS_REJECT_UNAUTHORIZED=0 is refused/],
    ] as const) {
      const res = await runCli([...args], { env: { ...env, ...extra } });
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(res.stderr).toMatch(pattern);
      expect(res.stderr).not.toMatch(/sandbox-password/);
    }
  });
});

describe('refsync status and changes', () => {
  it('status lists every target with its last fetch', async () => {
    const res = await runCli(['status', '--json'], { env: { DATABASE_URL: t.url, REDIS_URL: 'redis://127.0.0.1:1' } });
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { runs: unknown[]; targets: { list_key: string; last_status: string }[]; queue: unknown };
    expect(out.targets.find((x) => x.list_key === 'hazmat')!.last_status).toBe('failed');
    expect(out.targets.length).toBe(catalog.length + 3 + 1);
    // Without a configuration no schema policy is known; with one, each target says its list's.
    expect(out.targets.find((x) => x.list_key === 'hazmat')).toMatchObject({ schema_policy: null, held_reason: null, nonconforming: 0, views_waiting: null });
    const configured = {
      DATABASE_URL: t.url,
      REDIS_URL: 'redis://127.0.0.1:1',
      REFSYNC_BASE_URL: 'https://api.vendor.example',
      REFSYNC_API_KEY: 'k',
      REFSYNC_ENVIRONMENT: 'sandbox',
    };
    const withPolicy = await runCli(['status', '--json'], { env: { ...configured, REFSYNC_SCHEMA_CHANGES: '{"*": "hold-breaking", "hazmat": "freeze"}' } });
    const policies = (JSON.parse(withPolicy.stdout) as { targets: { list_key: string; schema_policy: string }[] }).targets;
    expect(policies.find((x) => x.list_key === 'hazmat')!.schema_policy).toBe('freeze');
    expect(policies.find((x) => x.list_key === 'accessorials')!.schema_policy).toBe('hold-breaking');
  });

  it('status fits the width it is given, one line per target, and keeps whole rows when piped', async () => {
    const statusEnv = { DATABASE_URL: t.url, REDIS_URL: 'redis://127.0.0.1:1' };
    const narrow = await runCli(['status'], { env: { ...statusEnv, COLUMNS: '80' } });
    expect(narrow.code).toBe(0);
    expect(Math.max(...narrow.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(narrow.stdout).toMatch(/^sandbox \(sandbox\): run \d+ by cli (partial|failed)/m);
    expect(narrow.stdout).toMatch(/^hazmat +failed +(just now|\d+ s ago|\d+ min ago) +.*…$/m);
    const piped = await runCli(['status'], { env: statusEnv });
    expect(piped.stdout).toMatch(/^hazmat\s+failed\s+(just now|\d+ s ago|\d+ min ago)\s/m);
  });

  it('changes shows the recorded change, newest first, filtered by list', async () => {
    const res = await runCli(['changes', '--json', '--list', 'shipment_modes'], { env: { DATABASE_URL: t.url } });
    expect(res.code).toBe(0);
    const { changes } = JSON.parse(res.stdout) as { changes: { code: string; change: string }[] };
    expect(changes.map((c) => [c.code, c.change])).toEqual([['SPACE', 'added']]);
    const none = await runCli(['changes', '--since', '2999-01-01'], { env: { DATABASE_URL: t.url } });
    expect(none.stdout).toMatch(/no changes recorded/);
  });
});

describe('refsync migrate', () => {
  const name = `refsync_t_migrate_${process.pid}`;
  afterAll(() => dropTestDatabase(name));

  it('creates the schema in an empty database, and again changes nothing', async () => {
    const admin = new pg.Client({ connectionString: inject('databaseServerUrl') });
    await admin.connect();
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(inject('databaseServerUrl'));
    url.pathname = `/${name}`;
    const first = await runCli(['migrate'], { env: { DATABASE_URL: url.toString() } });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const second = await runCli(['migrate'], { env: { DATABASE_URL: url.toString() } });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
  });
});

describe('refsync demo', () => {
  it('ends with one line and exit 2 on a DATABASE_URL that is not migrated (the sandbox and receiver it started are closed)', async () => {
    const empty = await createUnmigratedDatabase('refsync_t_demo_empty');
    try {
      // Before, the process printed the line and never exited: the timeout would kill it (code null).
      const res = await runCli(['demo'], { env: { DATABASE_URL: empty.url }, timeoutMs: 30_000 });
      expect(res).toMatchObject({ code: 2, stderr: 'refsync: DATABASE_URL: schema refdata is missing; run `refsync migrate` first\n' });
    } finally {
      await dropTestDatabase(empty.name);
    }
  });

  it('runs on embedded PGlite in a fresh folder, showing the diff and the alerts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'refsync-demo-'));
    try {
      const res = await runCli(['demo'], { cwd: dir, timeoutMs: 120_000 });
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/embedded PGlite in \.\/\.refsync\/pgdata/);
      expect(res.stdout).toMatch(/charge_codes\s+2025-09-01\s+added\s+EVCH/);
      expect(res.stdout).toMatch(/accessorials\s+removed\s+LGDEL/);
      expect(res.stdout).toMatch(/equipment_types\s+modified\s+REEFER\s+name/);
      expect(res.stdout).toMatch(/added\s+charge_codes\s+2025-09-01\s+EVCH\s+delivered/);
      expect(res.stdout).toMatch(/msg_refsync_\S+\s+refdata\.added\s+charge_codes\s+2025-09-01\s+EVCH\s+verified$/m);
      expect(res.stdout).toMatch(/^LGDEL\s+removed\s+refsync_demo\.shipments\.accessorial\s+29\s/m);
      expect(res.stdout).toMatch(/^REEFER\s+modified\s+refsync_demo\.shipments\.equipment_type\s+30\s/m);
      expect(res.stdout).toMatch(/orphans now \(refsync impact orphans\): LGDEL 40 rows, LFTG 1 row/);
      expect(res.stdout).not.toMatch(/INVALID/);
      const status = await runCli(['status'], { cwd: dir });
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/: run 2 by cli succeeded/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
