import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from '../sync/fixture.ts';
import { runCli } from '../helpers/cli.ts';
import { loadStatusPage, renderStatusPage } from '../../src/server/status-page.ts';
import { ago, createFacts, usageConfig } from './fixture.ts';

const t = useTestDatabase();
const VERSION = '2024-06-11';
let sb: Sandbox;
const fixtures: Array<ReturnType<typeof pipelineFixture>> = [];

beforeAll(async () => {
  sb = await useSandbox();
});
beforeEach(() => sb.control.reset());
afterAll(async () => {
  await Promise.all(fixtures.map((f) => f.client.close()));
});

function fixture(environment: string, usage: unknown[]) {
  const fx = pipelineFixture(sb, {
    REFSYNC_ENVIRONMENT: environment,
    REFSYNC_CHARGE_CODE_VERSIONS: VERSION,
    REFSYNC_LISTS: 'charge_codes',
    REFSYNC_ALERT_ON: 'removed,used_code_changed',
    REFSYNC_CONFIG: usageConfig(usage),
  });
  fixtures.push(fx);
  return fx;
}

async function alertsOf(environment: string) {
  const { rows } = await t.db.query<{ kind: string; payload: Record<string, unknown> }>(
    'select kind, payload from refdata.alerts where environment = $1 order by kind',
    [environment],
  );
  return rows;
}

async function impactsOf(environment: string) {
  const { rows } = await t.db.query<{ code: string; change: string; impact: unknown }>(
    'select code, change, impact from refdata.entry_changes where environment = $1 order by code',
    [environment],
  );
  return rows;
}

const retire = (code: string) => sb.control.removeEntry('charge_codes', code, { version: VERSION });

describe('a sync that retires or modifies codes in use', () => {
  it('raises one used_code_changed alert with the rows, time range and top customers of each code in use', async () => {
    const shipments = await createFacts(t.db, 'shipments_a', [
      ['TON', 10, 'acme'],
      ['TON', 5, 'acme'],
      ['TON', 1, 'globex'],
      ['TON', 200, 'initech'], // older than recentDays: not in use
      ['SOC', 20, 'acme'],
      ['SOC', 30, 'acme'],
      ['NOA', 100, 'acme'], // only used long ago
      ['LHL', 2, 'acme'], // unchanged
    ]);
    await t.db.query('create table public.invoices_a (id serial primary key, charge_code varchar(8))');
    await t.db.query("insert into public.invoices_a (charge_code) values ('TON'), ('TON'), ('LHL')");
    const fx = fixture('impact-a', [
      { list: 'charge_codes', column: shipments, at: 'shipped_at', groupBy: 'customer', recentDays: 90 },
      { list: 'charge_codes', variant: VERSION, column: 'public.invoices_a.charge_code' },
    ]);
    await fx.sync(t.db);
    retire('TON');
    retire('NOA');
    retire('DTW');
    sb.control.modifyEntry('charge_codes', 'SOC', { description: 'Additional Stop Charge' }, { version: VERSION });
    const run = await fx.sync(t.db);
    expect(run.status).toBe('succeeded');
    expect(run.outcomes[0]!.counts).toMatchObject({ removed: 3, modified: 1 });

    const alerts = await alertsOf('impact-a');
    expect(alerts.map((a) => a.kind)).toEqual(['removed', 'used_code_changed']);
    const used = alerts[1]!.payload;
    expect(used.count).toBe(2);
    expect(used.more).toBe(0);
    expect(used.impact).toEqual([
      {
        column: 'public.shipments_a.charge_code',
        code: 'TON',
        change: 'removed',
        rows: 3,
        from: ago(10).toISOString(),
        to: ago(1).toISOString(),
        top: [
          { value: 'acme', rows: 2 },
          { value: 'globex', rows: 1 },
        ],
      },
      {
        column: 'public.shipments_a.charge_code',
        code: 'SOC',
        change: 'modified',
        rows: 2,
        from: ago(30).toISOString(),
        to: ago(20).toISOString(),
        top: [{ value: 'acme', rows: 2 }],
      },
      { column: 'public.invoices_a.charge_code', code: 'TON', change: 'removed', rows: 2, from: null, to: null, top: null },
    ]);

    // The change event carries the impact too: on each change row whose code is in use, and only there.
    const changes = await impactsOf('impact-a');
    expect(
      changes.map((c) => [c.code, c.change, c.impact === null ? null : (c.impact as Array<{ column: string; rows: number }>).map((i) => [i.column, i.rows])]),
    ).toEqual([
      ['DTW', 'removed', null],
      ['NOA', 'removed', null],
      ['SOC', 'modified', [['public.shipments_a.charge_code', 2]]],
      [
        'TON',
        'removed',
        [
          ['public.shipments_a.charge_code', 3],
          ['public.invoices_a.charge_code', 2],
        ],
      ],
    ]);
  });

  it('raises no used_code_changed alert when the codes it retires are not in use', async () => {
    const shipments = await createFacts(t.db, 'shipments_b', [
      ['NOA', 100, 'acme'],
      ['LHL', 2, 'acme'],
    ]);
    const fx = fixture('impact-b', [{ list: 'charge_codes', column: shipments, at: 'shipped_at', groupBy: 'customer' }]);
    await fx.sync(t.db);
    retire('NOA');
    retire('DTW');
    expect((await fx.sync(t.db)).status).toBe('succeeded');
    const alerts = await alertsOf('impact-b');
    expect(alerts.map((a) => [a.kind, a.payload.count])).toEqual([['removed', 2]]);
    expect((await impactsOf('impact-b')).map((c) => [c.code, c.impact])).toEqual([
      ['DTW', null],
      ['NOA', null],
    ]);
  });

  it('a usage table it cannot read leaves the sync applied, the error recorded, and the other columns counted', async () => {
    const shipments = await createFacts(t.db, 'shipments_c', [['TON', 3, 'acme']]);
    const fx = fixture('impact-c', [
      { list: 'charge_codes', column: 'public.no_such_table.charge_code' },
      { list: 'charge_codes', column: shipments, at: 'shipped_at' },
    ]);
    await fx.sync(t.db);
    retire('TON');
    const run = await fx.sync(t.db);
    expect(run.status).toBe('succeeded');
    const outcome = run.outcomes[0]!;
    expect(outcome.status).toBe('changed');
    expect(outcome.impactError).toMatch(/^impact on public\.no_such_table\.charge_code not computed: relation "public\.no_such_table" does not exist$/);
    const { rows } = await t.db.query<{ status: string; impact_error: string; current: number }>(
      `select s.status, s.impact_error,
              (select count(*)::int from refdata.entries e where e.environment = s.environment and e.list_key = 'charge_codes' and e.code = 'TON' and e.valid_to is null) as current
       from refdata.snapshots s where s.id = $1`,
      [outcome.snapshotId],
    );
    expect(rows).toEqual([{ status: 'ok', impact_error: outcome.impactError, current: 0 }]);
    const alerts = await alertsOf('impact-c');
    expect(alerts.map((a) => a.kind)).toEqual(['removed', 'used_code_changed']);
    expect(alerts[1]!.payload.impact).toEqual([
      { column: shipments, code: 'TON', change: 'removed', rows: 1, from: ago(3).toISOString(), to: ago(3).toISOString(), top: null },
    ]);
  });

  it('a fact table slower than REFSYNC_IMPACT_TIMEOUT_S costs one impact error, shown by status, --json and the status page', async () => {
    const fast = await createFacts(t.db, 'shipments_f', [['TON', 3, 'acme']]);
    await createFacts(t.db, 'shipments_slow_rows', [['TON', 2, 'acme']]);
    // A view that sleeps for every row it reads: a slow, unindexed fact table.
    await t.db.query('create view public.shipments_slow as select * from public.shipments_slow_rows where pg_sleep(30) is not null');
    const fx = pipelineFixture(sb, {
      REFSYNC_ENVIRONMENT: 'impact-slow',
      REFSYNC_CHARGE_CODE_VERSIONS: VERSION,
      REFSYNC_LISTS: 'charge_codes',
      REFSYNC_ALERT_ON: 'removed,used_code_changed',
      REFSYNC_IMPACT_TIMEOUT_S: '0.2',
      REFSYNC_CONFIG: usageConfig([
        { list: 'charge_codes', column: 'public.shipments_slow.charge_code', at: 'shipped_at' },
        { list: 'charge_codes', column: fast, at: 'shipped_at' },
      ]),
    });
    fixtures.push(fx);
    await fx.sync(t.db);
    retire('TON');
    const run = await fx.sync(t.db);
    expect(run.status).toBe('succeeded');
    const outcome = run.outcomes[0]!;
    expect(outcome.status).toBe('changed');
    const expected = 'impact on public.shipments_slow.charge_code not computed: the read took longer than 0.2 s (REFSYNC_IMPACT_TIMEOUT_S)';
    expect(outcome.impactError).toBe(expected);
    // The change landed and the other column was still counted.
    const alerts = await alertsOf('impact-slow');
    expect(alerts.map((a) => a.kind)).toEqual(['removed', 'used_code_changed']);
    expect(alerts[1]!.payload.impact).toEqual([expect.objectContaining({ column: fast, code: 'TON', rows: 1 })]);

    const env = { DATABASE_URL: t.url, LOG_LEVEL: 'error' };
    const json = await runCli(['status', '--json'], { env });
    expect(json.code).toBe(0);
    const targets = (JSON.parse(json.stdout) as { targets: Array<{ environment: string; impact_error: string | null }> }).targets;
    expect(targets.find((x) => x.environment === 'impact-slow')!.impact_error).toBe(expected);
    const text = await runCli(['status'], { env: { ...env, COLUMNS: '1000' } });
    expect(text.stdout).toContain(`impact: ${expected}`);
    const page = renderStatusPage(await loadStatusPage(t.db, [fx.source]));
    expect(page).toContain(expected);
  });

  it('reads through a role with SELECT on the usage columns only, as docs/impact.md grants; a table not granted is an impact error', async () => {
    const shipments = await createFacts(t.db, 'shipments_g', [
      ['TON', 2, 'acme'],
      ['TON', 4, 'globex'],
    ]);
    await t.db.query('alter table public.shipments_g add column amount numeric');
    await createFacts(t.db, 'shipments_h', [['TON', 2, 'acme']]);
    // refsync's own role: everything in refdata (as its owner would have), and on the user's data only the grant.
    const role = `refsync_t22_${randomBytes(4).toString('hex')}`;
    await t.db.query(`create role ${role} login`);
    try {
      for (const grant of [
        `grant usage on schema refdata, public to ${role}`,
        `grant all on all tables in schema refdata to ${role}`,
        `grant all on all sequences in schema refdata to ${role}`,
        `grant execute on all functions in schema refdata to ${role}`,
        `grant select (charge_code, shipped_at, customer) on public.shipments_g to ${role}`,
      ]) {
        await t.db.query(grant);
      }
      const url = new URL(t.url);
      url.username = role;
      const db = await openDatabase({ url: url.toString(), poolSize: 2, applicationName: 'refsync-test' });
      try {
        const fx = fixture('impact-g', [
          { list: 'charge_codes', column: shipments, at: 'shipped_at', groupBy: 'customer' },
          { list: 'charge_codes', column: 'public.shipments_h.charge_code' },
        ]);
        await fx.sync(db);
        retire('TON');
        const run = await fx.sync(db);
        expect(run.outcomes[0]!.status).toBe('changed');
        expect(run.outcomes[0]!.impactError).toBe('impact on public.shipments_h.charge_code not computed: permission denied for table shipments_h');
        const alerts = await alertsOf('impact-g');
        expect(alerts[1]!.payload.impact).toEqual([
          {
            column: shipments,
            code: 'TON',
            change: 'removed',
            rows: 2,
            from: ago(4).toISOString(),
            to: ago(2).toISOString(),
            top: [
              { value: 'acme', rows: 1 },
              { value: 'globex', rows: 1 },
            ],
          },
        ]);
        // The grant is on those columns only: the rest of the table stays closed to refsync.
        await expect(db.query('select amount from public.shipments_g')).rejects.toThrow(/permission denied for table shipments_g/);
      } finally {
        await db.close();
      }
    } finally {
      await t.db.query(`drop owned by ${role}`);
      await t.db.query(`drop role ${role}`);
    }
  });
});
