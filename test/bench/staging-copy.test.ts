// The COPY path of the staging table (large batches on node-postgres): values with the characters
// COPY's text format escapes must arrive exactly as served, through a first load and a resync.
// The first load is written straight into the entries (COPY too, with the target's columns in
// front). Without the current-row index the resync stages every row: a spill of 20,000 and the last
// 5,000, both by COPY; with the index it would stage only the changed 25, under copyMinRows.
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from '../sync/fixture.ts';

const t = useTestDatabase();
const tuning = { currentRowIndex: false, spillThreshold: 20_000, copyMinRows: 1_000 };
const tricky = 'tab\there, newline\nthere, back\\slash, CR\r, quote " and \\N and unicode é€😀';

describe('staging through COPY', () => {
  it('keeps escaped characters exactly, over a spill and a resync', async () => {
    const sandbox = await useSandbox();
    sandbox.control.setGenerated('accessorials', 25_000);
    sandbox.control.modifyEntry('accessorials', 'G0000007', { description: tricky, note: { nested: 'a\\b\tc' } });
    const fx = pipelineFixture(sandbox);

    const first = await fx.sync(t.db, ['accessorials'], { tuning });
    expect(first.outcomes[0]!.status).toBe('changed');
    expect(first.outcomes[0]!).toMatchObject({ baseline: true, entryCount: 25_000 });
    const served = sandbox.control.getEntries('accessorials') as Array<Record<string, unknown>>;
    const { rows } = await t.db.query<{ n: number }>("select count(*)::int as n from refdata.entries where list_key = 'accessorials' and valid_to is null");
    expect(rows[0]!.n).toBe(served.length);
    const { rows: one } = await t.db.query<{ description: string; payload: Record<string, unknown> }>(
      "select description, payload from refdata.entries where list_key = 'accessorials' and entry_key = 'G0000007' and valid_to is null",
    );
    expect(one[0]!.description).toBe(tricky);
    expect(one[0]!.payload).toEqual(served.find((e) => e.code === 'G0000007'));

    sandbox.control.changeGenerated('accessorials', { everyNth: 1000 });
    const again = await fx.sync(t.db, ['accessorials'], { tuning });
    // The tricky entry hashes the same as stored: only the generated changes show as modified.
    expect(again.outcomes[0]!.counts).toEqual({ added: 0, removed: 0, modified: 25, reappeared: 0, reshaped: 0 });
    const { rows: still } = await t.db.query<{ description: string }>(
      "select description from refdata.entries where list_key = 'accessorials' and entry_key = 'G0000007' and valid_to is null",
    );
    expect(still[0]!.description).toBe(tricky);
    const { rows: current } = await t.db.query<{ n: number }>(
      "select count(*)::int as n from refdata.entries where list_key = 'accessorials' and valid_to is null",
    );
    expect(current[0]!.n).toBe(served.length);
  }, 60_000);
});
