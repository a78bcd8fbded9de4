// The first load of a large list is written straight into refdata.entries while it is fetched.
// It must store exactly what the staged path stores, leave nothing behind when the fetch fails,
// and hand over to the staged path when it meets a key twice or finds the target locked.
import { beforeEach, describe, expect, it } from 'vitest';
import { recordOutcomeFailure } from '../../src/sync/outcome/record-failure.ts';
import { eachFailureLog } from '../../src/sync/outcome/failure-log.ts';
import { syncTarget, type PageSource } from '../../src/sync/sync-target.ts';
import { lockTarget } from '../../src/sync/target/target-lock.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { captureLogs, loadLines } from '../helpers/logs.ts';
import { count, servedAndStored, useGeneratedList } from './fixture.ts';

const t = useTestDatabase();
const LIST = 'equipment_types';
const ENTRIES = 8_500; // the last 500 arrive after the last spill: the direct load writes them with one insert
const g = useGeneratedList(LIST, ENTRIES);
beforeEach(async () => {
  // Every case starts from a target never loaded.
  for (const table of ['alerts', 'entry_changes', 'entries', 'snapshots']) {
    await t.db.query(`delete from refdata.${table} where list_key = $1`, [LIST]);
  }
});

/**
 * Syncs the list with spills every 2,000 rows, recording a failure as the in-process sync does, and
 * counts the rows written each way: straight into the entries (the first load) or into staging.
 */
async function sync(client: PageSource = g.fx.client) {
  const logs = captureLogs('debug');
  const synced = await syncTarget(t.db, client, g.target, { runId: null, tuning: { spillThreshold: 2_000 }, logger: logs.logger });
  const outcome = await recordOutcomeFailure(t.db, synced, null, eachFailureLog(silentLogger));
  const load = loadLines(logs).at(-1);
  const written = (loader: string) => (load?.loader === loader ? load.rowsWritten : 0);
  return { outcome, direct: written('first-load'), staged: written('resync'), fetches: load?.fetches };
}

/** The list as served, with `edit` applied to each page of entries before it is handed on. */
function edited(edit: (entries: unknown[], page: number) => unknown[]): PageSource & { calls: number } {
  return {
    calls: 0,
    async *pages(request) {
      this.calls += 1;
      let page = 0;
      for await (const batch of g.fx.client.pages(request)) {
        const entries = edit(batch.entries, page++);
        // Edited entries are no longer the text they were parsed from.
        yield { ...batch, entries, servedText: entries === batch.entries ? batch.servedText : null };
      }
    },
  };
}

const currentRows = () => servedAndStored(t.db, g.sb, g.target, true);

describe('the direct first load', () => {
  it('writes a large first load straight into the entries, under the snapshot it commits with', async () => {
    const first = await sync();
    expect(first.outcome).toMatchObject({ status: 'changed', baseline: true, entryCount: ENTRIES });
    expect(first.outcome.counts.added).toBe(ENTRIES);
    expect(first.direct).toBe(ENTRIES);
    expect(first.staged).toBe(0);
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);

    const { rows } = await t.db.query<{ id: string; fetched_at: Date; added: number; entry_count: number }>(
      `select id, fetched_at, added, entry_count from refdata.snapshots where list_key = $1`,
      [LIST],
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.id)).toBe(first.outcome.snapshotId);
    expect(rows[0]).toMatchObject({ added: ENTRIES, entry_count: ENTRIES });
    const { rows: stamps } = await t.db.query<{ first: number; last: number; valid_from: Date; n: number }>(
      `select first_snapshot_id as first, last_snapshot_id as last, valid_from, count(*)::int as n
       from refdata.entries where list_key = $1 group by 1, 2, 3`,
      [LIST],
    );
    const id = first.outcome.snapshotId;
    expect(stamps).toEqual([{ first: id, last: id, valid_from: rows[0]!.fetched_at, n: ENTRIES }]);
    expect(await count(t.db, 'entry_changes', 'list_key = $1', [LIST])).toBe(0);

    // The next sync finds it loaded: nothing changed, nothing written either way.
    const again = await sync();
    expect(again.outcome.status).toBe('unchanged');
    expect(again.direct + again.staged).toBe(0);
  }, 120_000);

  it('leaves nothing behind when the fetch fails after rows were written', async () => {
    const failing = edited((entries, page) => {
      if (page === 6) throw new UpstreamError('http_status', 'HTTP 502 from the service', { endpoint: '/v2/equipment-types/', status: 502 });
      return entries;
    });
    const failed = await sync(failing);
    expect(failed.outcome.status).toBe('failed');
    expect(failed.direct).toBeGreaterThan(0);
    expect(await count(t.db, 'entries', 'list_key = $1', [LIST])).toBe(0);
    // The failure was recorded (under the target's lock, which the rolled-back load released).
    expect(await count(t.db, 'snapshots', "list_key = $1 and status = 'failed'", [LIST])).toBe(1);

    const next = await sync();
    expect(next.outcome).toMatchObject({ status: 'changed', entryCount: ENTRIES });
    expect(next.direct).toBe(ENTRIES);
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
  }, 120_000);

  it('fetches again through staging when a key comes twice, keeping an identical duplicate once', async () => {
    // Page 5 serves the first entry of page 0 again, unchanged: a later spill (pages of 1,000) meets its key twice.
    let repeated: unknown;
    const source = edited((entries, page) => {
      if (page === 0) repeated ??= entries[0];
      return page === 5 ? [...entries, repeated] : entries;
    });
    const loaded = await sync(source);
    expect(source.calls).toBe(2);
    expect(loaded.fetches).toBe(2);
    expect(loaded.outcome).toMatchObject({ status: 'changed', entryCount: ENTRIES });
    // The second fetch staged every entry served, the duplicate too; the diff kept it once.
    expect(loaded.staged).toBe(ENTRIES + 1);
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
  }, 120_000);

  it('takes the staged path while another transaction holds the target', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.db.transaction(async (tx) => {
      await lockTarget(tx, g.target.source.environment, LIST, g.target.variant);
      locked();
      await held;
    });
    await lockTaken;
    const source = edited((entries, page) => {
      // The lock goes once the fetch is well past its first spill, so the apply can take it.
      if (page === 8) release();
      return entries;
    });
    const loaded = await sync(source);
    await holder;
    expect(loaded.direct).toBe(0);
    expect(loaded.staged).toBe(ENTRIES);
    expect(loaded.outcome).toMatchObject({ status: 'changed', baseline: true, entryCount: ENTRIES });
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
  }, 120_000);
});
