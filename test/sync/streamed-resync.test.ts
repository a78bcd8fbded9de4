// A large resync whose current-row index is in hand at its first spill writes its versions while the
// list is fetched (src/sync/load/streamed-resync.ts). It must end exactly where staging every changed
// row ends: the same current rows, history and change rows, reappeared keys told apart from new ones,
// and a hold (too many removed, a schema policy) that leaves the rows as they were.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { targetsFor, type Target } from '../../src/catalog/catalog.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { recordOutcomeFailure, eachFailureLog } from '../../src/sync/outcome/target-outcome.ts';
import { syncTarget, type PageSource } from '../../src/sync/sync-target.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { useChangeNotices } from '../helpers/change-notices.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { count, pipelineFixture, servedAndStored } from './fixture.ts';

const t = useTestDatabase();
const ENTRIES = 12_000;
/**
 * The index is read after 500 entries, before the first spill at 3,000 kept entries (pages are
 * 1,000): the spill finds it in. Every other entry changed keeps well over 3,000.
 */
const tuning = { spillThreshold: 3_000, indexAfterEntries: 500 };

/** A generated list on a sandbox of its own, its source set by `env`. */
function useList(list: 'accessorials' | 'hazmat' | 'piece_types' | 'service_levels', env: Record<string, string> = {}) {
  const at = {} as { sb: Sandbox; fx: ReturnType<typeof pipelineFixture>; target: Target };
  beforeAll(async () => {
    at.sb = await useSandbox();
    at.sb.control.setGenerated(list, ENTRIES);
    at.fx = pipelineFixture(at.sb, env);
    at.target = targetsFor(at.fx.source, [list])[0]!;
  });
  afterAll(async () => {
    await at.fx?.client.close();
  });
  return {
    at,
    sync: async (client: PageSource = at.fx.client) =>
      recordOutcomeFailure(t.db, await syncTarget(t.db, client, at.target, { runId: null, tuning }), null, eachFailureLog(silentLogger)),
    current: () => servedAndStored(t.db, at.sb, at.target, true),
    history: async () =>
      (
        await t.db.query<{ n: number; current: number }>(
          'select count(*)::int as n, count(*) filter (where valid_to is null)::int as current from refdata.entries where list_key = $1',
          [list],
        )
      ).rows[0]!,
  };
}

/** A snapshot's change rows by kind and the fields they name. */
async function changeFields(snapshotId: number) {
  const { rows } = await t.db.query<{ change: string; changed_fields: string[] | null; n: number }>(
    `select change, changed_fields, count(*)::int as n from refdata.entry_changes where snapshot_id = $1 group by 1, 2 order by 1, 2`,
    [snapshotId],
  );
  return rows;
}

describe('a streamed resync', () => {
  const l = useList('accessorials');
  const noticesOf = useChangeNotices(() => t.url);

  it('writes modified, added and removed entries as staging does, and tells a key back from a new one', async () => {
    const first = await l.sync();
    expect(first).toMatchObject({ status: 'changed', baseline: true, entryCount: ENTRIES });
    expect(await noticesOf(first.snapshotId)).toEqual([
      {
        environment: 'sandbox',
        list_key: 'accessorials',
        variant: '',
        snapshot_id: first.snapshotId,
        added: ENTRIES,
        removed: 0,
        modified: 0,
        reappeared: 0,
        reshaped: 0,
      },
    ]);
    l.at.sb.control.changeGenerated('accessorials', { everyNth: 2 });
    l.at.sb.control.removeEntry('accessorials', 'G0000101');
    l.at.sb.control.addEntry('accessorials', { code: 'ZNEW', description: 'added after the load', id: 7 });
    const changed = await l.sync();
    expect(changed.status).toBe('changed');
    expect(changed.counts).toEqual({ added: 1, removed: 1, modified: ENTRIES / 2 - 1, reappeared: 0, reshaped: 0 });
    // Its NOTIFY went with its COMMIT, once.
    expect(await noticesOf(changed.snapshotId)).toEqual([
      { environment: 'sandbox', list_key: 'accessorials', variant: '', snapshot_id: changed.snapshotId, ...changed.counts },
    ]);
    const { served, stored } = await l.current();
    expect(stored).toEqual(served);
    // Every closed version ends at the snapshot before, every opened one starts at this one.
    const { rows: ends } = await t.db.query<{ last: string; first: string; n: number }>(
      `select last_snapshot_id as last, first_snapshot_id as first, count(*)::int as n from refdata.entries
       where list_key = 'accessorials' and (valid_to is not null or first_snapshot_id = $1) group by 1, 2 order by 2`,
      [changed.snapshotId],
    );
    expect(ends.map((r) => [Number(r.first) === changed.snapshotId, Number(r.last) === changed.snapshotId, r.n])).toEqual([
      [false, false, 1 + ENTRIES / 2 - 1],
      [true, true, 1 + ENTRIES / 2 - 1],
    ]);
    expect(await l.history()).toEqual({ n: ENTRIES + ENTRIES / 2, current: ENTRIES });
    expect(await count(t.db, 'entry_changes', 'snapshot_id = $1', [changed.snapshotId])).toBe(ENTRIES / 2 + 1);
    // The fields a modification touched, found as each spill was written: only the description here.
    expect(await changeFields(changed.snapshotId!)).toEqual([
      { change: 'added', changed_fields: null, n: 1 },
      { change: 'modified', changed_fields: ['description'], n: ENTRIES / 2 - 1 },
      { change: 'removed', changed_fields: null, n: 1 },
    ]);

    // Back, with other entries changed again so that the list streams: reappeared, not added.
    const removed = (
      await t.db.query<{ payload: Record<string, unknown> }>(`select payload from refdata.entries where list_key = 'accessorials' and entry_key = 'G0000101'`)
    ).rows[0]!.payload;
    l.at.sb.control.addEntry('accessorials', removed);
    l.at.sb.control.changeGenerated('accessorials', { everyNth: 3 });
    const back = await l.sync();
    expect(back.counts.reappeared).toBe(1);
    expect(back.counts.added).toBe(0);
    const after = await l.current();
    expect(after.stored).toEqual(after.served);
  }, 120_000);
});

describe('a streamed resync held for its removals', () => {
  const l = useList('hazmat', { REFSYNC_MAX_REMOVED_FRACTION: '0.1' });

  it('rolls its versions back: the rows stay as they were, with a held snapshot and no change rows', async () => {
    await l.sync();
    const before = await l.current();
    const history = await l.history();
    l.at.sb.control.changeGenerated('hazmat', { everyNth: 2 });
    for (let i = 0; i < 2_000; i++) l.at.sb.control.removeEntry('hazmat', `G${String(i * 5 + 1).padStart(7, '0')}`);
    const held = await l.sync();
    expect(held.status).toBe('held');
    expect(held.counts.removed).toBe(2_000);
    expect((await l.current()).stored).toEqual(before.stored);
    expect(await l.history()).toEqual(history);
    expect(await count(t.db, 'entry_changes', "list_key = 'hazmat'")).toBe(0);
    expect(await count(t.db, 'snapshots', "list_key = 'hazmat' and status = 'held'")).toBe(1);
  }, 120_000);
});

describe('a streamed resync held by its schema policy', () => {
  const l = useList('piece_types', { REFSYNC_SCHEMA_CHANGES: 'freeze' });

  it('rolls its versions back, and applies them on the next sync with the policy accepted', async () => {
    await l.sync();
    const before = await l.current();
    l.at.sb.control.addField('piece_types', 'transit_days', 3);
    const held = await l.sync();
    expect(held.status).toBe('held');
    expect(held.errorCode).toBe('held_schema');
    expect((await l.current()).stored).toEqual(before.stored);
    expect(await count(t.db, 'entry_changes', "list_key = 'piece_types'")).toBe(0);

    const accepted = await syncTarget(t.db, l.at.fx.client, l.at.target, { runId: null, tuning, acceptSchema: true });
    expect(accepted.status).toBe('changed');
    expect(accepted.counts.reshaped).toBe(ENTRIES);
    expect(await changeFields(accepted.snapshotId!)).toEqual([{ change: 'reshaped', changed_fields: ['transit_days'], n: ENTRIES }]);
    const after = await l.current();
    expect(after.stored).toEqual(after.served);
  }, 120_000);
});

describe('a streamed resync whose fetch fails', () => {
  const l = useList('service_levels');

  it('leaves the rows as they were, and the next sync applies the list', async () => {
    await l.sync();
    const before = await l.current();
    const history = await l.history();
    l.at.sb.control.changeGenerated('service_levels', { everyNth: 2 });
    // Page 9 of 12 fails: the spills before it were written in the open transaction.
    const failing: PageSource = {
      async *pages(request) {
        let page = 0;
        for await (const entries of l.at.fx.client.pages(request)) {
          if (page++ === 8) throw new UpstreamError('http_status', 'HTTP 502 from the service', { endpoint: '/v2/service-levels/', status: 502 });
          yield entries;
        }
      },
    };
    const failed = await l.sync(failing);
    expect(failed.status).toBe('failed');
    expect((await l.current()).stored).toEqual(before.stored);
    expect(await l.history()).toEqual(history);
    expect(await count(t.db, 'snapshots', "list_key = 'service_levels' and status = 'failed'")).toBe(1);

    const next = await l.sync();
    expect(next).toMatchObject({ status: 'changed', counts: { modified: ENTRIES / 2 } });
    const after = await l.current();
    expect(after.stored).toEqual(after.served);
  }, 120_000);
});
