import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/sync/collect/collect.ts';
import { payloadsParam } from '../../src/sync/sql.ts';
import { useTestDatabase } from '../helpers/db.ts';

// Payloads reach Postgres as one JSON array document (jsonb_array_elements), or past a size as a
// jsonb[] array (unnest): both must give back each payload as the jsonb its own text parses to, in
// order, whatever it holds.

const t = useTestDatabase();

const payloads = [
  { id: 1, code: 'SOC', description: 'say "hi" \\ back\\slash', long: 'tab\tnewline\nreturn\r' },
  { nested: { list: [1, 2.5, -0, 1e21], empty: {}, none: null, yes: true } },
  { unicode: 'café ☃ 😀 \u2028', control: '\u0001\u001f', quoteKey: { 'a"b': 'c\\d' } },
  [],
  'a bare string',
  123.456,
  null,
  {},
]
  .map((p) => canonicalJson(p))
  // A number no double holds, kept as served (src/upstream/list-body.ts#parseKeepingNumbers): jsonb stores it exactly either way.
  .concat('{"big":12345678901234567890,"precise":0.10000000000000000000001}');

async function roundTrip(documentChars: number): Promise<{ call: string; texts: string[] }> {
  const { call, value } = payloadsParam(payloads, '$1', documentChars);
  const { rows } = await t.db.query<{ p: string; n: string }>(`select p::text as p, n from rows from (${call}) with ordinality as s(p, n) order by n`, [value]);
  return { call, texts: rows.map((r) => r.p) };
}

describe('payloads as one parameter', () => {
  it('gives back every payload in order as jsonb, as one document and as a jsonb[] array past the size', async () => {
    const { rows } = await t.db.query<{ p: string }>('select p::text as p from unnest($1::jsonb[]) with ordinality as s(p, n) order by n', [payloads]);
    const expected = rows.map((r) => r.p);
    expect(expected).toHaveLength(payloads.length);

    const document = await roundTrip(1_000_000);
    expect(document.call).toBe('jsonb_array_elements($1::jsonb)');
    expect(document.texts).toEqual(expected);

    const array = await roundTrip(10);
    expect(array.call).toBe('unnest($1::jsonb[])');
    expect(array.texts).toEqual(expected);
  });

  it('takes no payloads at all', async () => {
    const { call, value } = payloadsParam([], '$1');
    const { rows } = await t.db.query(`select * from rows from (${call}) as s(p)`, [value]);
    expect(rows).toEqual([]);
  });
});
