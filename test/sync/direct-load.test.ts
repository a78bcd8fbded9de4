// The first load of a large list is written straight into refdata.entries while it is fetched.
// It must store exactly what the staged path stores, leave nothing behind when the fetch fails, and
// still store the list whole when it meets a key twice or finds the target locked (it hands over to
// the staged path). The tests read what was stored; how few rows each way writes is the bench's (P3).
import { beforeEach, describe, expect, it } from 'vitest';
import { recordOutcomeFailure, eachFailureLog } from '../../src/sync/outcome/target-outcome.ts';
import { syncTarget, type PageSource } from '../../src/sync/sync-target.ts';
import { lockTarget } from '../../src/sync/target/target-lock.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { count, countingEntriesWritten, servedAndStored, useGeneratedList } from './fixture.ts';

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

/** Syncs the list with spills every 2,000 rows, recording a failure as the in-process sync does. */
async function sync(client: PageSource = g.fx.client) {
  const synced = await syncTarget(t.db, client, g.target, { runId: null, tuning: { spillThreshold: 2_000 } });
  return recordOutcomeFailure(t.db, synced, null, eachFailureLog(silentLogger));
}

/** The list as served, with `edit` applied to each page of entries before it is handed on; `calls` counts the fetches. */
function edited(edit: (entries: unknown[], page: number) => unknown[] | Promise<unknown[]>): PageSource & { calls: number } {
  return {
    calls: 0,
    async *pages(request) {
      this.calls += 1;
      let page = 0;
      for await (const batch of g.fx.client.pages(request)) {
        const entries = await edit(batch.entries, page++);
        // Edited entries are no longer the text they were parsed from.
        yield { ...batch, entries, servedText: entries === batch.entries ? batch.servedText : null };
      }
    },
  };
}

const currentRows = () => servedAndStored(t.db, g.sb, g.target, true);

/**
 * Whether another session has written into refdata.entries in a transaction still open (it holds the
 * lock an insert takes): rows no other session sees until it commits, and that a rollback undoes.
 */
async function entriesBeingWritten(): Promise<boolean> {
  const { rows } = await t.db.query<{ writing: boolean }>(
    `select exists (select from pg_locks where database = (select oid from pg_database where datname = current_database())
                    and relation = 'refdata.entries'::regclass and mode = 'RowExclusiveLock' and granted
                    and pid <> pg_backend_pid()) as writing`,
  );
  return rows[0]!.writing;
}

describe('the direct first load', () => {
  it('stores a large first load under the snapshot it commits with; the next sync writes none of its rows', async () => {
    const first = await sync();
    expect(first).toMatchObject({ status: 'changed', baseline: true, entryCount: ENTRIES });
    expect(first.counts.added).toBe(ENTRIES);
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);

    const { rows } = await t.db.query<{ id: string; fetched_at: Date; added: number; entry_count: number }>(
      `select id, fetched_at, added, entry_count from refdata.snapshots where list_key = $1`,
      [LIST],
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.id)).toBe(first.snapshotId);
    expect(rows[0]).toMatchObject({ added: ENTRIES, entry_count: ENTRIES });
    const { rows: stamps } = await t.db.query<{ first: number; last: number; valid_from: Date; n: number }>(
      `select first_snapshot_id as first, last_snapshot_id as last, valid_from, count(*)::int as n
       from refdata.entries where list_key = $1 group by 1, 2, 3`,
      [LIST],
    );
    const id = first.snapshotId;
    expect(stamps).toEqual([{ first: id, last: id, valid_from: rows[0]!.fetched_at, n: ENTRIES }]);
    expect(await count(t.db, 'entry_changes', 'list_key = $1', [LIST])).toBe(0);

    // The next sync finds it loaded: nothing changed, and not one row of the entries written again.
    const again = await countingEntriesWritten(t.db, LIST, () => sync());
    expect(again.result.status).toBe('unchanged');
    expect(again.written).toBe(0);
  }, 120_000);

  it('leaves nothing behind when the fetch fails after rows were written', async () => {
    let writing: boolean | undefined;
    const failing = edited(async (entries, page) => {
      if (page === 6) {
        // Three spills in: rows of the load are in the entries, not committed.
        writing = await entriesBeingWritten();
        throw new UpstreamError('http_status', 'HTTP 502 from the service', { endpoint: '/v2/equipment-types/', status: 502 });
      }
      return entries;
    });
    const failed = await sync(failing);
    expect(failed.status).toBe('failed');
    expect(writing).toBe(true);
    expect(await count(t.db, 'entries', 'list_key = $1', [LIST])).toBe(0);
    // The failure was recorded (under the target's lock, which the rolled-back load released).
    expect(await count(t.db, 'snapshots', "list_key = $1 and status = 'failed'", [LIST])).toBe(1);

    const next = await sync();
    expect(next).toMatchObject({ status: 'changed', baseline: true, entryCount: ENTRIES });
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
  }, 120_000);

  it('fetches again when a key comes twice, keeping an identical duplicate once', async () => {
    // Page 5 serves the first entry of page 0 again, unchanged: a later spill (pages of 1,000) meets its key twice.
    let repeated: unknown;
    const source = edited((entries, page) => {
      if (page === 0) repeated ??= entries[0];
      return page === 5 ? [...entries, repeated] : entries;
    });
    const loaded = await sync(source);
    expect(source.calls).toBe(2);
    expect(loaded).toMatchObject({ status: 'changed', baseline: true, entryCount: ENTRIES });
    // One row for each key, the duplicate's too, and nothing left of the first fetch's rows.
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
    expect(await count(t.db, 'entries', 'list_key = $1', [LIST])).toBe(ENTRIES);
  }, 120_000);

  it('writes nothing into the entries while another transaction holds the target, and stores the list once it is free', async () => {
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
    let writingWhileHeld: boolean | undefined;
    const source = edited(async (entries, page) => {
      // The lock goes once the fetch is well past its first spill, so the apply can take it.
      if (page === 8) {
        writingWhileHeld = await entriesBeingWritten();
        release();
      }
      return entries;
    });
    const loaded = await sync(source);
    await holder;
    expect(writingWhileHeld).toBe(false);
    expect(loaded).toMatchObject({ status: 'changed', baseline: true, entryCount: ENTRIES });
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
  }, 120_000);
});
