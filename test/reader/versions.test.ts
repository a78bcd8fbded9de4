import { beforeAll, describe, expect, it } from 'vitest';
import { chargeCodeVersionDiff } from '../../src/db/functions.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { refsync, syncSandbox, V2024, V2025 } from './fixture.ts';

type Code = { code: string; description: string } & Record<string, unknown>;

/** The sandbox's own difference between two versions, from its data rather than from refsync's. */
function expectedDiff(sb: Sandbox, a: string, b: string) {
  const byCode = (version: string) => new Map((sb.control.getEntries('charge_codes', { version }) as Code[]).map((e) => [e.code, e]));
  const ea = byCode(a);
  const eb = byCode(b);
  const rows: Array<{ code: string; change: string; changed_fields: string[] | null }> = [];
  for (const [code, entry] of ea) {
    const other = eb.get(code);
    if (!other) rows.push({ code, change: 'removed', changed_fields: null });
    else {
      const fields = [...new Set([...Object.keys(entry), ...Object.keys(other)])].filter((f) => JSON.stringify(entry[f]) !== JSON.stringify(other[f])).sort();
      if (fields.length) rows.push({ code, change: 'modified', changed_fields: fields });
    }
  }
  for (const code of eb.keys()) if (!ea.has(code)) rows.push({ code, change: 'added', changed_fields: null });
  const order = (r: { code: string; change: string }) => `${r.change} ${r.code}`;
  return { rows: rows.sort((x, y) => order(x).localeCompare(order(y))), unchanged: ea.size - rows.filter((r) => r.change !== 'added').length };
}

const simplify = (rows: Array<{ code: string; change: string; changed_fields: string[] | null }>) =>
  rows
    .map((r) => ({ code: r.code, change: r.change, changed_fields: r.changed_fields }))
    .sort((x, y) => `${x.change} ${x.code}`.localeCompare(`${y.change} ${y.code}`));

describe('charge-code version diff', () => {
  const t = useTestDatabase();
  let sb: Sandbox;

  beforeAll(async () => {
    sb = await useSandbox();
    await syncSandbox(t.db, sb, ['charge_codes']);
  });

  it('the SQL function equals the sandbox own difference between its two versions', async () => {
    const expected = expectedDiff(sb, V2024, V2025);
    expect(expected.rows.length).toBeGreaterThan(5);
    const rows = await chargeCodeVersionDiff(t.db, V2024, V2025);
    expect(simplify(rows)).toEqual(expected.rows);
    expect(new Set(rows.map((r) => r.environment))).toEqual(new Set(['sandbox']));
    const det = rows.find((r) => r.code === 'DET')!;
    expect(det).toMatchObject({ change: 'modified', description_a: 'Detention', description_b: 'Detention at Stop', changed_fields: ['description'] });
    const ton = rows.find((r) => r.code === 'TON')!;
    expect(ton).toMatchObject({ change: 'removed', description_b: null, payload_b: null, changed_fields: null });
    // Swapping the versions mirrors the result.
    const back = await chargeCodeVersionDiff(t.db, V2025, V2024);
    expect(
      back
        .filter((r) => r.change === 'added')
        .map((r) => r.code)
        .sort(),
    ).toEqual(
      rows
        .filter((r) => r.change === 'removed')
        .map((r) => r.code)
        .sort(),
    );
    expect(await chargeCodeVersionDiff(t.db, V2024, V2024)).toEqual([]);
  });

  it('refsync versions diff --json (a subprocess on DATABASE_URL alone) reports the same', async () => {
    const expected = expectedDiff(sb, V2024, V2025);
    const res = await refsync(['versions', 'diff', V2024, V2025, '--json'], { DATABASE_URL: t.url });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ a: V2024, b: V2025, skipped: [] });
    expect(report.environments).toHaveLength(1);
    const env = report.environments[0];
    expect(env.environment).toBe('sandbox');
    expect(simplify(env.changes)).toEqual(expected.rows);
    expect(env.counts).toEqual({
      removed: expected.rows.filter((r) => r.change === 'removed').length,
      added: expected.rows.filter((r) => r.change === 'added').length,
      modified: expected.rows.filter((r) => r.change === 'modified').length,
      unchanged: expected.unchanged,
    });
  });

  it('prints a readable table: removed (only in A), added (only in B), modified with the fields, and counts', async () => {
    const res = await refsync(['versions', 'diff', V2024, V2025, '--environment', 'sandbox'], { DATABASE_URL: t.url });
    expect(res.code).toBe(0);
    const out = res.stdout;
    expect(out).toContain(`removed: only in ${V2024} (3):`);
    expect(out).toContain(`added: only in ${V2025} (5):`);
    expect(out).toContain('modified (4):');
    expect(out).toMatch(/DET\s+description\s+Detention\s+Detention at Stop/);
    expect(out).toMatch(/TON\s+Truck Order Not Used/);
    expect(out).toMatch(/EVC\s+Electric Vehicle Charging Surcharge/);
    expect(out).toContain(`3 removed (only in ${V2024}), 5 added (only in ${V2025}), 4 modified, 37 unchanged`);
  });

  it('an unknown version or environment is one line on stderr and exit 2', async () => {
    const unknown = await refsync(['versions', 'diff', V2024, '1999-01-01'], { DATABASE_URL: t.url });
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(`refsync: versions diff: version '1999-01-01' has no charge codes (versions present: ${V2024}, ${V2025})\n`);
    const env = await refsync(['versions', 'diff', V2024, V2025, '--environment', 'nowhere'], { DATABASE_URL: t.url });
    expect(env.code).toBe(2);
    expect(env.stderr).toBe("refsync: versions diff: environment 'nowhere' holds no charge codes\n");
    const usage = await refsync(['versions', 'diff', V2024], { DATABASE_URL: t.url });
    expect(usage.code).toBe(2);
    expect(usage.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('compares only environments that hold both versions and says which it skipped', async () => {
    await t.db.query(
      `insert into refdata.entries (environment, list_key, variant, entry_key, code, description, payload, entry_hash, valid_from, first_snapshot_id)
       select 'staging', list_key, variant, entry_key, code, description, payload, entry_hash, valid_from, first_snapshot_id
       from refdata.entries where list_key = 'charge_codes' and variant = $1 and valid_to is null`,
      [V2024],
    );
    try {
      const rows = await chargeCodeVersionDiff(t.db, V2024, V2025);
      expect(new Set(rows.map((r) => r.environment))).toEqual(new Set(['sandbox']));
      const res = await refsync(['versions', 'diff', V2024, V2025, '--json'], { DATABASE_URL: t.url });
      expect(JSON.parse(res.stdout).skipped).toEqual([{ environment: 'staging', has: V2024 }]);
      const text = await refsync(['versions', 'diff', V2024, V2025], { DATABASE_URL: t.url });
      expect(text.stdout).toContain(`not compared: environment staging holds only version ${V2024}`);
    } finally {
      await t.db.query("delete from refdata.entries where environment = 'staging'");
    }
  });
});
