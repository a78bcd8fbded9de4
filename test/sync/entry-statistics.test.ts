// A sync that changed a large share of refdata.entries analyzes it after its commit, so the next
// sync's statements are planned for the table as it is now (entry-statistics.ts); a small change
// leaves it to autovacuum.
import { describe, expect, it } from 'vitest';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useGeneratedList } from './fixture.ts';

const t = useTestDatabase();
const LIST = 'nmfc_codes';
const ENTRIES = 3_000;
const g = useGeneratedList(LIST, ENTRIES);
/** From 1,000 changed rows, and a tenth of the table, a sync analyzes it. */
const tuning = { analyzeAfterRows: 1_000, spillThreshold: 1_000, indexAfterEntries: 200 };

async function entriesStatistics(): Promise<{ analyzed: number; reltuples: number }> {
  // A fresh view of the cumulative statistics: they are cached for the rest of a transaction.
  await t.db.query('select pg_stat_clear_snapshot()');
  const { rows } = await t.db.query<{ analyzed: number; reltuples: number }>(
    `select s.analyze_count::int as analyzed, c.reltuples::float8 as reltuples
     from pg_stat_user_tables s join pg_class c on c.oid = s.relid where s.relid = 'refdata.entries'::regclass`,
  );
  return rows[0]!;
}

async function sync() {
  const outcome = await syncTarget(t.db, g.fx.client, g.target, { runId: null, tuning });
  expect(outcome.status).toBe('changed');
  return outcome;
}

describe('statistics of refdata.entries after a sync', () => {
  it('are refreshed after a large write and left alone after a small one', async () => {
    const before = await entriesStatistics();

    // The first load: every row new.
    const first = await sync();
    expect(first.counts.added).toBe(ENTRIES);
    const loaded = await entriesStatistics();
    expect(loaded.analyzed).toBe(before.analyzed + 1);
    expect(loaded.reltuples).toBe(ENTRIES);
    // The columns plans read, not the payload, description or hash.
    const { rows: columns } = await t.db.query<{ attname: string }>(
      `select attname from pg_stats where schemaname = 'refdata' and tablename = 'entries' order by attname`,
    );
    expect(columns.map((c) => c.attname)).toEqual([
      'code',
      'entry_key',
      'environment',
      'first_snapshot_id',
      'id',
      'last_snapshot_id',
      'list_key',
      'valid_from',
      'valid_to',
      'variant',
    ]);

    // 500 rows modified: below the 1,000 rows, though a sixth of the table.
    g.sb.control.changeGenerated(LIST, { everyNth: 6 });
    const small = await sync();
    expect(small.counts.modified).toBe(ENTRIES / 6);
    expect((await entriesStatistics()).analyzed).toBe(loaded.analyzed);

    // 1,500 modified: above both; the closed versions count as rows of the table.
    g.sb.control.changeGenerated(LIST, { everyNth: 2 });
    const large = await sync();
    expect(large.counts.modified).toBe(ENTRIES / 2);
    const after = await entriesStatistics();
    expect(after.analyzed).toBe(loaded.analyzed + 1);
    expect(after.reltuples).toBe(ENTRIES + ENTRIES / 6 + ENTRIES / 2);
  }, 120_000);
});
