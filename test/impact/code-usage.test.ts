import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { ago, clock } from './fixture.ts';

// refdata.code_usage against a count made here, fact by fact: many codes in one call, ties between
// the top values, a null value of groupBy, facts without a time, and every p_top. Migration 0016
// counts the top values in one pass over the facts found where 0007 scanned them once per code;
// the answer must be the same.

const t = useTestDatabase();

interface Fact {
  code: string | null;
  at: Date | null;
  customer: string | null;
}

/** The same facts on every run (an xorshift generator with a fixed seed), so a failure repeats. */
function facts(count: number): Fact[] {
  let seed = 58;
  const next = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const out: Fact[] = [];
  for (let i = 0; i < count; i++) {
    const code = next(50) === 0 ? null : `C${String(next(40)).padStart(2, '0')}`;
    const at = next(20) === 0 ? null : ago(next(200));
    const customer = next(10) === 0 ? null : `cust ${String(next(7)).padStart(2, '0')}`;
    out.push({ code, at, customer });
  }
  return out;
}

interface Usage {
  code: string;
  rows: number;
  first_at: string | null;
  last_at: string | null;
  top: Array<{ value: string | null; rows: number }> | null;
}

/** What code_usage should answer, counted here: ties by value, a null value last (Postgres's order). */
function expected(all: Fact[], codes: string[], since: Date | null, groupBy: boolean, top: number | null): Usage[] {
  const out: Usage[] = [];
  for (const code of [...new Set(codes)].sort()) {
    const hits = all.filter((f) => f.code === code && (since === null || (f.at !== null && f.at >= since)));
    if (hits.length === 0) continue;
    const times = hits.flatMap((f) => (f.at ? [f.at.getTime()] : []));
    const counts = new Map<string | null, number>();
    for (const f of hits) counts.set(f.customer, (counts.get(f.customer) ?? 0) + 1);
    const ranked = [...counts]
      .sort(([va, na], [vb, nb]) => nb - na || (va === null ? 1 : vb === null ? -1 : va < vb ? -1 : va > vb ? 1 : 0))
      .map(([value, rows]) => ({ value, rows }));
    const shown = top === null ? [] : ranked.slice(0, Math.max(top, 0));
    out.push({
      code,
      rows: hits.length,
      first_at: times.length ? new Date(Math.min(...times)).toISOString() : null,
      last_at: times.length ? new Date(Math.max(...times)).toISOString() : null,
      top: groupBy && shown.length > 0 ? shown : null,
    });
  }
  return out;
}

async function codeUsage(codes: string[], at: string | null, since: Date | null, groupBy: string | null, top: number | null): Promise<Usage[]> {
  const { rows } = await t.db.query<{ code: string; rows: string; first_at: Date | null; last_at: Date | null; top: Usage['top'] }>(
    'select * from refdata.code_usage($1, $2::text[], $3, $4, $5, $6)',
    ['public.usage_facts.charge_code', codes, at, since, groupBy, top],
  );
  return rows.map((r) => ({
    code: r.code,
    rows: Number(r.rows),
    first_at: r.first_at ? r.first_at.toISOString() : null,
    last_at: r.last_at ? r.last_at.toISOString() : null,
    top: r.top,
  }));
}

describe('refdata.code_usage', () => {
  it('counts each code, its time range and its top values as a count fact by fact does, for many codes at once', async () => {
    const all = facts(3000);
    await t.db.query('create table public.usage_facts (id serial primary key, charge_code text, shipped_at timestamptz, customer text)');
    await t.db.query(
      `insert into public.usage_facts (charge_code, shipped_at, customer)
       select * from unnest($1::text[], $2::timestamptz[], $3::text[])`,
      [all.map((f) => f.code), all.map((f) => f.at), all.map((f) => f.customer)],
    );
    // Every code but a few, one twice, and codes no fact holds.
    const codes = [...Array.from({ length: 36 }, (_, i) => `C${String(i).padStart(2, '0')}`), 'C07', 'NONE', 'C99'];
    const since = new Date(clock - 90 * 86_400_000);

    const cases: Array<[at: string | null, since: Date | null, groupBy: string | null, top: number | null]> = [
      ['shipped_at', since, 'customer', 5],
      ['shipped_at', since, 'customer', 1],
      ['shipped_at', since, 'customer', 3],
      ['shipped_at', since, 'customer', 0],
      ['shipped_at', since, 'customer', null],
      ['shipped_at', null, 'customer', 7],
      ['shipped_at', since, null, 5],
      [null, null, 'customer', 5],
      [null, null, null, 5],
    ];
    for (const [at, from, groupBy, top] of cases) {
      const want = expected(all, codes, from, groupBy !== null, top).map((u) => (at === null ? { ...u, first_at: null, last_at: null } : u));
      expect(want.length, 'the facts hold most of the codes asked').toBeGreaterThan(30);
      expect(await codeUsage(codes, at, from, groupBy, top), `at ${at}, since ${from?.toISOString()}, groupBy ${groupBy}, top ${top}`).toEqual(want);
    }
    // The fixture has what the cases are about: ties among a code's top values, and null values.
    const counts = expected(all, codes, since, true, 10);
    expect(counts.some((u) => u.top!.some((g, i) => i > 0 && g.rows === u.top![i - 1]!.rows))).toBe(true);
    expect(counts.some((u) => u.top!.some((g) => g.value === null))).toBe(true);
  });
});
