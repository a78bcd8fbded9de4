// `refsync status` as a user runs it (a subprocess against a synced database): one line per target
// at 80, 100 and 120 columns, relative ages, and `status --list KEY` with the reason in full, the
// command that resolves it, the last snapshots and the last changes before → after.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { queueKeys, testQueuePrefix } from '../queue/helpers.ts';

const t = useTestDatabase();
let sb: Sandbox;
let env: Record<string, string>;
const LISTS = 'accessorials,carrier_package_types,charge_codes,equipment_types,hazmat,piece_types';
// The layout tests read a queue of their own: a worker running on this machine's default queue (its
// schedule's next run is a clock time) must not change what they see.
const ownQueue = { REFSYNC_QUEUE_PREFIX: testQueuePrefix() };

const ok = (r: CliResult) => {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
};

beforeAll(async () => {
  sb = await useSandbox();
  env = sandboxEnv(sb, { DATABASE_URL: t.url, REFSYNC_ENVIRONMENT: 'status-cli', REFSYNC_LISTS: LISTS, REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,unpinned' });
  expect((await runCli(['sync'], { env })).code).toBe(0);
  // A code with a trailing space and an empty description, a renamed entry, a mass removal (held)
  // and a list whose service answers an HTML page (failed).
  sb.control.addEntry('accessorials', { code: 'APT ', description: '' });
  sb.control.modifyEntry('equipment_types', 'REEFER', { name: 'Reefer  53 ft ' });
  sb.control.setEntries('hazmat', [{ code: 'UN1001', description: 'Acetylene' }]);
  sb.control.setFaults({ html: { count: 10 }, paths: ['piece_types'] });
  expect((await runCli(['sync'], { env })).code).toBe(1);
  sb.control.reset();
});

describe('refsync status', () => {
  it.each([80, 100, 120])('at %i columns: one line per target, none wider, ages relative, the reason shortened', async (columns) => {
    const lines = ok(await runCli(['status'], { env: { ...env, ...ownQueue, COLUMNS: String(columns) } })).split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(columns);
    const targets = [
      'accessorials',
      'carrier_package_types dhl',
      'charge_codes 2024-06-11',
      'charge_codes unpinned',
      'equipment_types',
      'hazmat',
      'piece_types',
    ];
    for (const name of targets)
      expect(
        lines.filter((l) => l.startsWith(`${name} `)),
        name,
      ).toHaveLength(1);
    const line = (name: string) => lines.find((l) => l.startsWith(`${name} `))!;
    expect(line('hazmat')).toMatch(/^hazmat\s+held\s+(just now|\d+ s ago)\s+(20\s+)?.*held: the fetch/);
    expect(line('piece_types')).toMatch(/^piece_types\s+failed\s+(just now|\d+ s ago)\s+.*answered an HTML page/);
    // At 80 columns the reasons take the room of the entries; wider, they are shown.
    if (columns >= 100) expect(line('accessorials')).toMatch(/^accessorials\s+ok\s+(just now|\d+ s ago)\s+43(\s|$)/);
    else expect(lines.filter((l) => /^list +status +fetched +reason$/.test(l))).toHaveLength(1);
    // Where the whole reason does not fit, it is cut and says so.
    if (columns < 120) expect(line('hazmat')).toMatch(/…$/);
    expect(lines.join('\n')).not.toMatch(/\d\d:\d\d:\d\d/);
    expect(lines).toContain('why a list is held or failed, and what resolves it: refsync status --list hazmat');
  });

  it('piped without COLUMNS: every column and the whole first line of each reason', async () => {
    const lines = ok(await runCli(['status'], { env })).split('\n');
    expect(lines.find((l) => l.startsWith('list '))).toMatch(/^list\s+status\s+fetched\s+entries\s+changed\s+last ok\s+reason$/);
    expect(lines.find((l) => l.startsWith('hazmat '))).toMatch(
      /held: the fetch would remove 20 of 20 entries \(more than 50%\); run refsync sync --list hazmat --accept-removals to apply it$/,
    );
  });

  it('--list KEY: the held reason in full, the command that accepts it, the last snapshots', async () => {
    const out = ok(await runCli(['status', '--list', 'hazmat'], { env: { ...env, COLUMNS: '80' } }));
    for (const line of out.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(out).toMatch(/^hazmat: source status-cli, environment status-cli\n {2}status {7}held, fetched /);
    expect(out.replace(/\n {15}/g, ' ')).toContain(
      '  reason       held: the fetch would remove 20 of 20 entries (more than 50%); run refsync sync --list hazmat --accept-removals to apply it\n',
    );
    expect(out).toContain('  resolve      refsync sync --list hazmat --accept-removals\n');
    expect(out).toMatch(/^ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}held {4}1 {8}\+1 -20 ~0 {2}held: the fetch would remov…$/m);
    expect(out).toMatch(/^ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}ok {6}20 {7}\+20 -0 ~0$/m);
    expect(out).toContain('no changes recorded (a first sync is its baseline)');
  });

  it('--list KEY: a failed list names the command that syncs it again', async () => {
    const out = ok(await runCli(['status', '--list', 'piece_types'], { env }));
    expect(out).toMatch(/ {2}status {7}failed \(protocol\), fetched .*, failed 1 in a row\n/);
    expect(out).toContain('  reason       GET /v2/shipments/piece-types/ page 1: answered an HTML page instead of JSON');
    expect(out).toContain('  resolve      refsync sync --list piece_types\n');
  });

  it('--list KEY: the last changes with each changed field before → after, values shown exactly', async () => {
    const equipment = ok(await runCli(['status', '--list', 'equipment_types'], { env }));
    expect(equipment).toMatch(/^ {2}\S+ \S+ {2}modified {3}REEFER\n {6}name: Refrigerated → "Reefer {2}53 ft "$/m);
    const accessorials = ok(await runCli(['status', '--list', 'accessorials'], { env }));
    expect(accessorials).toMatch(/^ {2}\S+ \S+ {2}added {6}"APT "\n {6}description: ""$/m);
  });

  it('--list KEY covers every variant; --source narrows it to a source by name or environment', async () => {
    const all = ok(await runCli(['status', '--list', 'charge_codes'], { env }));
    expect(all.match(/^charge_codes \S+: source/gm)).toEqual(['charge_codes 2024-06-11: source', 'charge_codes unpinned: source']);
    const ageless = (text: string) => text.replace(/\d+ s ago|just now/g, 'AGE');
    expect(ageless(ok(await runCli(['status', '--list', 'charge_codes', '--source', 'status-cli'], { env })))).toBe(ageless(all));
    expect(ok(await runCli(['status', '--list', 'charge_codes', '--source', 'elsewhere'], { env }))).toBe(
      'no sync of charge_codes for source elsewhere is recorded yet\n',
    );
  });

  it('--list KEY --json keeps every column of the snapshots and changes', async () => {
    const body = JSON.parse(ok(await runCli(['status', '--list', 'accessorials', '--json'], { env }))) as {
      targets: Array<{ status: string; resolve: string | null; snapshots: Array<Record<string, unknown>>; changes: Array<Record<string, unknown>> }>;
    };
    const [target] = body.targets;
    expect(target).toMatchObject({ status: 'ok', resolve: null });
    const snapshotColumns = (
      await t.db.query<{ column_name: string }>(
        "select column_name from information_schema.columns where table_schema = 'refdata' and table_name = 'snapshots'",
      )
    ).rows.map((r) => r.column_name);
    const changeColumns = (
      await t.db.query<{ column_name: string }>(
        "select column_name from information_schema.columns where table_schema = 'refdata' and table_name = 'entry_changes'",
      )
    ).rows.map((r) => r.column_name);
    expect(Object.keys(target!.snapshots[0]!)).toEqual(expect.arrayContaining([...snapshotColumns, 'source']));
    expect(Object.keys(target!.changes[0]!).sort()).toEqual([...changeColumns].sort());
    expect(target!.changes.find((c) => c.code === 'APT ')).toMatchObject({ change: 'added', after: { code: 'APT ', description: '' } });
  });

  it('names the Redis whose queue it read, and that it is the default when REDIS_URL is unset', async () => {
    const unset = ok(await runCli(['status'], { env }));
    expect(unset).toMatch(/^queue: \d+ waiting/m);
    expect(unset).toContain('\n  Redis 127.0.0.1:6379 db 0, prefix refsync (the default: REDIS_URL unset)\n');
    const named = ok(await runCli(['status'], { env: { ...env, REDIS_URL: 'redis://127.0.0.1:6379/3', REFSYNC_QUEUE_PREFIX: 'status-cli' } }));
    expect(named).toContain('\n  Redis 127.0.0.1:6379 db 3, prefix status-cli\n');
  });

  it("reads the queue and writes nothing to Redis (BullMQ would record the queue's meta on open)", async () => {
    const prefix = testQueuePrefix();
    const out = ok(await runCli(['status'], { env: { ...env, REDIS_URL: inject('redisUrl'), REFSYNC_QUEUE_PREFIX: prefix } }));
    expect(out).toMatch(/^queue: \d+ waiting/m);
    expect(await queueKeys(prefix)).toEqual([]);
  });

  it('without a worker configured here (after the demo, or DATABASE_URL alone) shows no queue line', async () => {
    const alone = ok(await runCli(['status'], { env: { DATABASE_URL: t.url } }));
    expect(alone).not.toMatch(/queue|Redis|REFSYNC_BASE_URL/);
    expect(alone).toMatch(/^alerts: /m);
    const json = JSON.parse(ok(await runCli(['status', '--json'], { env: { DATABASE_URL: t.url } }))) as { queue: unknown };
    expect(json.queue).toBeNull();
    const half = ok(await runCli(['status'], { env: { DATABASE_URL: t.url, REDIS_URL: 'redis://127.0.0.1:6379' } }));
    expect(half).toContain("queue: not read: the worker's settings are incomplete here (REFSYNC_BASE_URL: is required)");
  });

  it('refuses a key that is no list, and --source without --list, in one line (exit 2)', async () => {
    const bad = await runCli(['status', '--list', 'nope'], { env });
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/^refsync: status: --list 'nope' is not a list key \(one of: accessorials, /)]);
    const lone = await runCli(['status', '--source', 'x'], { env });
    expect([lone.code, lone.stderr]).toEqual([2, 'refsync: status: --source goes with --list KEY\n']);
  });
});

describe('text tables show values exactly', () => {
  it("refsync changes: the code 'APT ' and an empty description are quoted, a null one is blank", async () => {
    const lines = ok(await runCli(['changes', '--list', 'accessorials'], { env })).split('\n');
    expect(lines.find((l) => l.includes('APT'))).toMatch(/ accessorials\s+added\s+"APT " {2}""$/);
  });
});
