import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { pipelineFixture } from '../sync/fixture.ts';
import { createFacts, usageConfig } from './fixture.ts';

const t = useTestDatabase();
let sb: Sandbox;
const fixtures: Array<ReturnType<typeof pipelineFixture>> = [];

beforeAll(async () => {
  sb = await useSandbox();
});
beforeEach(() => sb.control.reset());
afterAll(async () => {
  await Promise.all(fixtures.map((f) => f.client.close()));
});

/** The environment a user sets for `refsync sync` and `refsync impact` alike. */
function userEnv(environment: string, versions: string, usage: unknown[]): Record<string, string> {
  return sandboxEnv(sb, {
    DATABASE_URL: t.url,
    REFSYNC_ENVIRONMENT: environment,
    REFSYNC_CHARGE_CODE_VERSIONS: versions,
    REFSYNC_LISTS: 'charge_codes',
    REFSYNC_CONFIG: usageConfig(usage),
  });
}

function sync(env: Record<string, string>) {
  const fx = pipelineFixture(sb, env);
  fixtures.push(fx);
  return fx.sync(t.db);
}

async function impactJson(args: string[], env: Record<string, string>): Promise<unknown> {
  const result = await runCli(['impact', ...args, '--json'], { env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

describe('refsync impact orphans', () => {
  it('lists the fact values no current code matches, or none valid at --at, with their counts', async () => {
    const column = await createFacts(t.db, 'shipments_o', [
      ['TON', 5, 'acme'],
      ['TON', 6, 'acme'],
      ['ZZZ', 1, 'acme'],
      ['ZZZ', 2, 'globex'],
      ['ZZZ', 400, 'globex'], // orphans count every fact, however old
      ['QQQ', 3, 'acme'],
      ['LHL', 1, 'acme'],
      [null, 1, 'acme'], // no code is no orphan
    ]);
    const env = userEnv('impact-o', '2024-06-11', [{ list: 'charge_codes', column, at: 'shipped_at' }]);
    await sync(env);
    const beforeRetirement = new Date().toISOString();
    sb.control.removeEntry('charge_codes', 'TON', { version: '2024-06-11' });
    await sync(env);

    const now = [
      { column, value: 'ZZZ', rows: 3, environment: 'impact-o', list_key: 'charge_codes', variant: '2024-06-11' },
      { column, value: 'TON', rows: 2, environment: 'impact-o', list_key: 'charge_codes', variant: '2024-06-11' },
      { column, value: 'QQQ', rows: 1, environment: 'impact-o', list_key: 'charge_codes', variant: '2024-06-11' },
    ];
    expect(await impactJson(['orphans'], env)).toEqual(now);
    expect(await impactJson(['orphans', '--at', beforeRetirement], env)).toEqual([now[0], now[2]]);
    expect(await impactJson(['orphans', '--list', 'accessorials'], env)).toEqual([]);

    // The same answer as SQL, for a dbt test (which passes when it returns no rows).
    const { rows } = await t.db.query("select value, rows::int from refdata.orphans($1, 'charge_codes', '2024-06-11', 'impact-o')", [column]);
    expect(rows).toEqual([
      { value: 'ZZZ', rows: 3 },
      { value: 'TON', rows: 2 },
      { value: 'QQQ', rows: 1 },
    ]);

    // Names reach SQL only through parse_ident and format('%I'): anything else is refused, not run.
    await expect(t.db.query("select * from refdata.orphans('public.shipments_o', 'charge_codes')")).rejects.toThrow(
      "usage name 'public.shipments_o' must be schema.table.column",
    );
    await expect(t.db.query(`select * from refdata.code_usage($1, array['TON'], 'shipped_at; drop table public.shipments_o')`, [column])).rejects.toThrow(
      /string is not a valid identifier/,
    );

    // As an analyst's dbt test runs it: as refdata_reader, granted the usage column only.
    await t.db.query('grant usage on schema public to refdata_reader');
    await t.db.query('grant select (charge_code) on public.shipments_o to refdata_reader');
    const asReader = await t.db.transaction(async (tx) => {
      await tx.query('set local role refdata_reader');
      return (await tx.query("select value, rows::int from refdata.orphans($1, 'charge_codes', '2024-06-11', 'impact-o')", [column])).rows;
    });
    expect(asReader).toEqual(rows);

    const table = await runCli(['impact', 'orphans'], { env });
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^column\s+value\s+rows\s+list\s+variant\s+environment$/);
    expect(table.stdout).toMatch(/^public\.shipments_o\.charge_code\s+ZZZ\s+3\s+charge_codes\s+2024-06-11\s+impact-o$/m);
  });

  it('refuses a bad --at in one line, exit 2', async () => {
    const env = userEnv('impact-o2', '2024-06-11', [{ list: 'charge_codes', column: 'public.x.y' }]);
    const result = await runCli(['impact', 'orphans', '--at', 'yesterday'], { env });
    expect([result.code, result.stderr]).toEqual([
      2,
      "refsync: impact orphans: --at 'yesterday' is not an ISO-8601 date or time (e.g. 2026-11-01 or 2026-11-01T12:00:00Z)\n",
    ]);
  });
});

describe('refsync impact without REFSYNC_CONFIG', () => {
  it('names the one setting it needs, in one line, exit 2 (as after the demo, with no source set either)', async () => {
    for (const args of [['orphans'], ['pin', '2024-06-11', '2025-09-01']]) {
      const result = await runCli(['impact', ...args], { env: { DATABASE_URL: t.url } });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        'refsync: REFSYNC_CONFIG: refsync impact reads the usage columns named in that file, with the source settings refsync sync uses; it is not set (see docs/data-teams.md, "Impact on your data")\n',
      );
    }
  });
});

describe('refsync impact pin', () => {
  it('weighs the codes only in one version, and those whose fields differ, by the facts in use', async () => {
    const column = await createFacts(t.db, 'shipments_p', [
      ['TON', 1, 'acme'],
      ['TON', 2, 'acme'],
      ['TON', 3, 'globex'],
      ['DTW', 4, 'acme'],
      ['NOA', 100, 'acme'], // older than recentDays: not in use
      ['SOC', 5, 'acme'],
      ['SOC', 6, 'acme'],
      ['FSC', 7, 'acme'],
      ['EVC', 8, 'acme'],
      ['LHL', 9, 'acme'], // the same in both versions: does not move
      ['LHL', 9, 'acme'],
    ]);
    const env = userEnv('impact-p', '2024-06-11,2025-09-01', [{ list: 'charge_codes', column, at: 'shipped_at', groupBy: 'customer' }]);
    await sync(env);
    const description = ['description'];
    expect(await impactJson(['pin', '2024-06-11', '2025-09-01'], env)).toEqual([
      { code: 'TON', change: 'removed', rows: 3, changed_fields: null, environment: 'impact-p' },
      { code: 'SOC', change: 'modified', rows: 2, changed_fields: description, environment: 'impact-p' },
      { code: 'DTW', change: 'removed', rows: 1, changed_fields: null, environment: 'impact-p' },
      { code: 'EVC', change: 'added', rows: 1, changed_fields: null, environment: 'impact-p' },
      { code: 'FSC', change: 'modified', rows: 1, changed_fields: description, environment: 'impact-p' },
      { code: 'CRB', change: 'added', rows: 0, changed_fields: null, environment: 'impact-p' },
      { code: 'CSS', change: 'added', rows: 0, changed_fields: null, environment: 'impact-p' },
      { code: 'DET', change: 'modified', rows: 0, changed_fields: description, environment: 'impact-p' },
      { code: 'LUM', change: 'modified', rows: 0, changed_fields: description, environment: 'impact-p' },
      { code: 'NOA', change: 'removed', rows: 0, changed_fields: null, environment: 'impact-p' },
      { code: 'TWP', change: 'added', rows: 0, changed_fields: null, environment: 'impact-p' },
      { code: 'WGS', change: 'added', rows: 0, changed_fields: null, environment: 'impact-p' },
    ]);
    const table = await runCli(['impact', 'pin', '2024-06-11', '2025-09-01'], { env });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^TON\s+removed\s+3\s/m);

    const unknown = await runCli(['impact', 'pin', '2024-06-11', '2023-01-01'], { env });
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      "refsync: impact pin: environment 'impact-p' holds no charge codes of version '2023-01-01' (sync it first: REFSYNC_CHARGE_CODE_VERSIONS)\n",
    ]);
  });
});

describe('impact tables show values exactly', () => {
  it("the code 'APT ' and an empty code print quoted, never trimmed into another code", async () => {
    const column = await createFacts(t.db, 'shipments_x', [
      ['APT ', 1, 'acme'],
      ['APT ', 2, 'acme'],
      ['', 3, 'acme'],
    ]);
    const env = userEnv('impact-x', '2024-06-11,2025-09-01', [{ list: 'charge_codes', column, at: 'shipped_at' }]);
    sb.control.addEntry('charge_codes', { code: 'APT ', description: ' Appointment ' }, { version: '2025-09-01' });
    await sync(env);
    const orphans = await runCli(['impact', 'orphans'], { env });
    expect(orphans.code).toBe(0);
    expect(orphans.stdout).toMatch(/^public\.shipments_x\.charge_code\s+"APT "\s+2\s+charge_codes\s+2024-06-11\s+impact-x$/m);
    expect(orphans.stdout).toMatch(/^public\.shipments_x\.charge_code\s+""\s+1\s+charge_codes\s+2024-06-11\s+impact-x$/m);
    const pin = await runCli(['impact', 'pin', '2024-06-11', '2025-09-01'], { env });
    expect(pin.code).toBe(0);
    expect(pin.stdout).toMatch(/^"APT "\s+added\s+2\s+" Appointment "\s+impact-x$/m);
  });
});

describe('usage configuration', () => {
  const load =
    (usage: unknown[], extra: Record<string, string> = {}) =>
    () =>
      loadConfig(sandboxEnv(sb, { REFSYNC_CONFIG: usageConfig(usage), REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,unpinned', ...extra }));

  it('resolves the variant (charge codes: the first configured version) and the recentDays default', () => {
    const source = load([
      { list: 'charge_codes', column: 'public.shipments.charge_code' },
      { list: 'hazmat', column: 'ops.loads.hazmat_code', at: 'loaded_at' },
    ])().sources[0]!;
    expect(source.usage).toEqual([
      { list: 'charge_codes', variant: '2024-06-11', column: 'public.shipments.charge_code', recentDays: 90 },
      { list: 'hazmat', variant: '', column: 'ops.loads.hazmat_code', at: 'loaded_at', recentDays: 90 },
    ]);
  });

  it('a file with usage and catalog but no sources takes the source from the environment, with the catalog applied', () => {
    const path = usageConfig([]);
    writeFileSync(path, JSON.stringify({ catalog: { hazmat: { basePath: '' } }, usage: [{ list: 'hazmat', column: 'ops.loads.hazmat_code' }] }));
    const config = loadConfig(sandboxEnv(sb, { REFSYNC_CONFIG: path }));
    expect(config.sources.map((s) => [s.environment, s.baseUrl, s.listOverrides, s.usage?.map((u) => u.column)])).toEqual([
      ['sandbox', sb.url, { hazmat: { basePath: '' } }, ['ops.loads.hazmat_code']],
    ]);
  });

  it('refuses, naming the setting, what would reach SQL unquoted or never be used', () => {
    expect(load([{ list: 'charge_codes', column: 'shipments.charge_code' }])).toThrow(
      "REFSYNC_CONFIG usage[0].column: 'shipments.charge_code' — must be schema.table.column, each a plain name (letters, digits, _)",
    );
    expect(load([{ list: 'charge_codes', column: 'public.shipments.code', groupBy: 'customer; drop table x' }])).toThrow(
      /^REFSYNC_CONFIG usage\[0\].groupBy: 'customer; drop table x' — must be a plain column name/,
    );
    expect(load([{ list: 'charge_codes', column: 'public.shipments.code', variant: '2025-09-01' }])).toThrow(
      "REFSYNC_CONFIG usage[0].variant: '2025-09-01' is not a variant source 'sandbox' syncs of charge_codes ('2024-06-11', 'unpinned')",
    );
    expect(load([{ list: 'hazmat', column: 'public.shipments.code' }], { REFSYNC_LISTS: 'charge_codes' })).toThrow(
      'REFSYNC_CONFIG usage[0].list: no source syncs hazmat (REFSYNC_LISTS)',
    );
    expect(load([{ list: 'charge_codes', column: 'public.shipments.code', recentDays: 0 }])).toThrow(/^REFSYNC_CONFIG usage\[0\].recentDays: '0' — /);
  });
});
