// The ids of current rows an index left unmatched go to Postgres as one bigint[] parameter, written
// as array text by refsync (not element by element by node-postgres): Postgres must read back the
// same ids, large ones and none at all included.
import { describe, expect, it } from 'vitest';
import { bigintArrayText } from '../../src/db/database.ts';
import { useTestDatabase } from '../helpers/db.ts';

describe('bigintArrayText', () => {
  const t = useTestDatabase();

  it('is read by Postgres as the same ids, in order', async () => {
    const ids = [1, 42, 2 ** 31 + 7, 2 ** 53 - 1, 3];
    expect(bigintArrayText(ids)).toBe('{1,42,2147483655,9007199254740991,3}');
    const { rows } = await t.db.query<{ id: string }>('select unnest($1::bigint[])::text as id', [bigintArrayText(ids)]);
    expect(rows.map((r) => r.id)).toEqual(ids.map(String));
  });

  it('writes no ids as an empty array', async () => {
    const { rows } = await t.db.query<{ n: number }>('select cardinality($1::bigint[]) as n', [bigintArrayText([])]);
    expect(rows[0]!.n).toBe(0);
  });

  it('carries a million ids', async () => {
    const ids = Array.from({ length: 1_000_000 }, (_, i) => 5_000_000 + i * 3);
    const { rows } = await t.db.query<{ n: number; first: string; last: string }>(
      'select cardinality(a) as n, a[1]::text as first, a[cardinality(a)]::text as last from (select $1::bigint[] as a) x',
      [bigintArrayText(ids)],
    );
    expect(rows[0]).toEqual({ n: 1_000_000, first: '5000000', last: String(5_000_000 + 999_999 * 3) });
  });
});
