// A resync closes the old versions of the entries it changed by primary key (src/sync/sql.ts,
// closeRows): never by reading the whole of refdata.entries, which holds every list's history. As a
// join with the diff, Postgres hashed the diff and scanned the table: 0.25 s of a million rows to
// close 10,000 (P3, docs/performance.md round six), and more with every list's history.
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/database.ts';
import { closeRows } from '../../src/sync/sql.ts';
import { useTestDatabase } from '../helpers/db.ts';

const t = useTestDatabase();

describe('closing the old versions of changed entries', () => {
  it('reads refdata.entries by primary key, not whole, and closes exactly the diff rows', async () => {
    await t.db.transaction(async (tx) => {
      // Everything is rolled back to here at the end: the test leaves no rows behind.
      await tx.query('savepoint start');
      // 200,000 current rows of one list, then a diff of 1% of them (what createDiff builds).
      await tx.query(
        `insert into refdata.entries (environment, list_key, variant, entry_key, code, payload, entry_hash, valid_from, first_snapshot_id)
         select 'close-env', 'nmfc_codes', '', 'k' || g, 'c' || g, jsonb_build_object('code', 'c' || g), md5(g::text), now(), 1
         from generate_series(1, 200000) g`,
      );
      await tx.query('analyze refdata.entries');
      await tx.query(
        `create temp table close_diff on commit drop as
         select entry_key, case when e.id % 3 = 0 then 'removed' else 'modified' end as change, e.id as old_id
         from refdata.entries e where e.environment = 'close-env' and e.id % 100 = 0`,
      );
      await tx.query('analyze close_diff');

      const sent: Array<{ text: string; params: unknown[] }> = [];
      const recording: Queryable = {
        query: (text, params) => {
          sent.push({ text, params: params ?? [] });
          return tx.query(text, params);
        },
        script: (statements) => tx.script(statements),
      };
      await closeRows(recording, 'close_diff', new Date(), 2);
      const { rows: plan } = await tx.query<{ 'QUERY PLAN': string }>(`explain ${sent[0]!.text}`, sent[0]!.params);
      const lines = plan.map((r) => r['QUERY PLAN']);
      expect(lines.join('\n')).toContain('entries_pkey');
      expect(lines.filter((l) => /Seq Scan on entries/.test(l))).toEqual([]);

      const { rows } = await tx.query<{ closed: number; diff: number; wrong: number }>(
        `select (select count(*)::int from refdata.entries where environment = 'close-env' and valid_to is not null) as closed,
                (select count(*)::int from close_diff) as diff,
                (select count(*)::int from refdata.entries e where environment = 'close-env' and valid_to is not null
                   and not exists (select 1 from close_diff d where d.old_id = e.id)) as wrong`,
      );
      expect(rows).toEqual([{ closed: 2000, diff: 2000, wrong: 0 }]);
      await tx.query('rollback to savepoint start');
    });
  });
});
