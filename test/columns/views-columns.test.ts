import { describe, expect, it } from 'vitest';
import { listFunctionsParams, viewsColumns } from '../../src/columns/columns-sql.ts';
import { useTestDatabase } from '../helpers/db.ts';

// The one read of the views' columns and of the lists' typed functions: a column change plans its
// DDL on what it says, so a view it misses or a function it misreads would be created twice or never.
describe('the views and functions as Postgres has them', () => {
  const t = useTestDatabase();

  it('reads every view column in order, a missing view once, and the lists whose two functions exist on the first view only', async () => {
    await t.db.query('drop function refdata.hazmat_diff(timestamptz, timestamptz, text, text)');
    const views = ['refdata.accessorials', 'refdata.no_such_view', 'refdata.hazmat_history'];
    const { rows } = await t.db.query<{ view: string; present: boolean; name: string | null; functions: string[] | null }>(viewsColumns, [
      views,
      ...listFunctionsParams(['accessorials', 'hazmat', 'nmfc_codes']),
    ]);
    const { rows: expected } = await t.db.query<{ view: string; name: string }>(
      `select v.view, a.attname as name from unnest($1::text[]) with ordinality as v(view, ord)
       join pg_attribute a on a.attrelid = to_regclass(v.view) and a.attnum > 0 and not a.attisdropped order by v.ord, a.attnum`,
      [views],
    );
    expect(rows.filter((r) => r.present).map((r) => ({ view: r.view, name: r.name }))).toEqual(expected);
    expect(rows.filter((r) => !r.present)).toEqual([{ view: 'refdata.no_such_view', present: false, name: null, type: null, functions: null }]);
    const firstView = rows.filter((r) => r.view === 'refdata.accessorials');
    expect(firstView.length).toBeGreaterThan(1);
    for (const r of firstView) expect(r.functions).toEqual(['accessorials', 'nmfc_codes']);
    expect(rows.filter((r) => r.view !== 'refdata.accessorials').every((r) => r.functions === null)).toBe(true);
  });
});
