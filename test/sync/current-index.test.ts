// A resync of a large list checks fetched entries against an index of the current rows and stages
// only the ones that are not current as fetched. The result must be exactly what staging every row
// gives: the same current rows, the same history and change rows, and a fetch that races another
// sync's apply must fall back rather than trust a stale index. The tests read what was stored and
// which rows of the entries a sync wrote; how few rows it staged is the bench's (P3).
import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { getListDefinition } from '../../src/catalog/catalog.ts';
import { ListCollector, type NormalizedEntry } from '../../src/sync/collect/collect.ts';
import { listBatch } from '../../src/upstream/list-batch.ts';
import { CurrentRowIndex } from '../../src/sync/load/large/current-index.ts';
import { RowsCheck, syncTarget, type PageSource } from '../../src/sync/sync-target.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { count, countingEntriesWritten, servedAndStored, useGeneratedList } from './fixture.ts';

const t = useTestDatabase();
const LIST = 'accessorials';
const ENTRIES = 12_000;
const g = useGeneratedList(LIST, ENTRIES);

/** Syncs the list with spills every 2,000 rows: the outcome, and the rows of the entries it wrote (inserted or updated). */
async function sync(client: PageSource = g.fx.client) {
  const { result: outcome, written } = await countingEntriesWritten(t.db, LIST, () =>
    syncTarget(t.db, client, g.target, { runId: null, tuning: { spillThreshold: 2_000 } }),
  );
  return { outcome, written };
}

const currentRows = () => servedAndStored(t.db, g.sb, g.target);

/** Whether a read of the list's index waits on a lock (its COPY), asked until it does or `ms` have passed. */
async function indexReadWaiting(ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const { rows } = await t.db.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and query like 'copy (select id, entry_key%'`,
    );
    if (rows[0]!.n > 0) return true;
  }
  return false;
}

/**
 * Takes an ACCESS EXCLUSIVE lock on refdata.entries (an index's COPY then waits on it) on a
 * connection of its own: `unlock` lets it go, `held` ends once it has.
 */
async function lockEntries(): Promise<{ unlock: () => void; held: Promise<void> }> {
  let unlock!: () => void;
  const unlocked = new Promise<void>((resolve) => (unlock = resolve));
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  const held = t.db.withConnection((conn) =>
    conn.transaction(async (tx) => {
      await tx.query('lock table refdata.entries in access exclusive mode');
      locked();
      await unlocked;
    }),
  );
  await lockTaken;
  return { unlock, held };
}

describe('the current-row index', () => {
  it('loads a large list, then resyncs it writing only the rows that changed', async () => {
    const first = await sync();
    expect(first.outcome).toMatchObject({ status: 'changed', baseline: true });
    expect(first.written).toBe(ENTRIES);

    const unchanged = await sync();
    expect(unchanged.outcome.status).toBe('unchanged');
    expect(unchanged.written).toBe(0);

    g.sb.control.changeGenerated(LIST, { everyNth: 1000 });
    g.sb.control.removeEntry(LIST, 'G0000100');
    g.sb.control.addEntry(LIST, { code: 'ZNEW', description: 'added after the load', id: 7 });
    const changed = await sync();
    expect(changed.outcome.counts).toEqual({ added: 1, removed: 1, modified: ENTRIES / 1000, reappeared: 0, reshaped: 0 });
    // Each modified entry's version closed and its new one opened, the removed one closed, the added one opened: no other row touched.
    expect(changed.written).toBe(2 * (ENTRIES / 1000) + 1 + 1);
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
    expect(await count(t.db, 'entry_changes', 'list_key = $1', [LIST])).toBe(ENTRIES / 1000 + 2);

    const removed = (
      await t.db.query<{ payload: Record<string, unknown> }>(`select payload from refdata.entries where list_key = $1 and entry_key = 'G0000100'`, [LIST])
    ).rows[0]!.payload;
    g.sb.control.addEntry(LIST, removed);
    const back = await sync();
    expect(back.outcome.counts).toEqual({ added: 0, removed: 0, modified: 0, reappeared: 1, reshaped: 0 });
    // Its new version opened; its closed version stays as it was.
    expect(back.written).toBe(1);
    const after = await currentRows();
    expect(after.stored).toEqual(after.served);
  }, 120_000);

  it('fetches again when another sync applies the target during the fetch', async () => {
    g.sb.control.modifyEntry(LIST, 'G0000042', { description: 'changed before the race' });
    let calls = 0;
    const racing: PageSource = {
      async *pages(request) {
        calls += 1;
        let page = 0;
        for await (const entries of g.fx.client.pages(request)) {
          // Halfway through the first fetch (its index read by now), another sync applies the list.
          if (calls === 1 && ++page === 8) {
            const other = await syncTarget(t.db, g.fx.client, g.target, { runId: null });
            expect(other.counts.modified).toBe(1);
            // ...and the list changes again on a page this fetch has yet to read.
            g.sb.control.modifyEntry(LIST, 'G0011990', { description: 'changed after the race' });
          }
          yield entries;
        }
      },
    };
    const raced = await sync(racing);
    expect(calls).toBe(2);
    expect(raced.outcome.counts).toEqual({ added: 0, removed: 0, modified: 1, reappeared: 0, reshaped: 0 });
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
    const { rows } = await t.db.query<{ entry_key: string; n: number }>(
      `select entry_key, count(*)::int as n from refdata.entries
       where list_key = $1 and entry_key in ('G0000042', 'G0011990') group by entry_key order by entry_key`,
      [LIST],
    );
    expect(rows).toEqual([
      { entry_key: 'G0000042', n: 2 },
      { entry_key: 'G0011990', n: 2 },
    ]);
  }, 120_000);

  it('drops fetched rows that are current as soon as the index is in, without holding them to a spill', async () => {
    g.sb.control.modifyEntry(LIST, 'G0011000', { description: 'changed on the last page' });
    // Spies here measure what is held in memory, which no outcome shows; `read` also paces the fetch.
    const read = vi.spyOn(CurrentRowIndex, 'read');
    const unmatched = vi.spyOn(CurrentRowIndex.prototype, 'unmatched');
    const kept = vi.spyOn(RowsCheck.prototype, 'kept');
    try {
      let calls = 0;
      const waiting: PageSource = {
        async *pages(request) {
          calls += 1;
          let page = 0;
          for await (const entries of g.fx.client.pages(request)) {
            // The index read starts once indexAfterEntries (5,000, five pages) are in: let it finish first.
            if (++page === 6) await read.mock.results[0]!.value;
            yield entries;
          }
        },
      };
      const { result: outcome, written } = await countingEntriesWritten(t.db, LIST, () =>
        syncTarget(t.db, waiting, g.target, { runId: null, tuning: { spillThreshold: 20_000, indexAfterEntries: 5_000 } }),
      );
      expect(calls).toBe(1);
      expect(outcome.counts).toEqual({ added: 0, removed: 0, modified: 1, reappeared: 0, reshaped: 0 });
      // The first five pages were held and checked at the end; of the rest only the modified entry was kept.
      expect(unmatched.mock.calls.reduce((n, [rows]) => n + rows.length, 0)).toBe(5_000 + 1);
      expect(kept).toHaveBeenCalledTimes(g.sb.control.getEntries(LIST).length);
      // Of the entries only the modified one was written: its version closed and its new one opened.
      expect(written).toBe(2);
    } finally {
      read.mockRestore();
      unmatched.mockRestore();
      kept.mockRestore();
    }
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
  }, 120_000);

  it('reads keys with non-ASCII characters and with COPY escapes from the index as they are stored', async () => {
    // Plain ASCII keys are read straight from the COPY bytes; these take the decoding way.
    const odd = ['Zé-üñ-北', 'Ztab\there', 'Zback\\slash\nnewline'];
    for (const [i, code] of odd.entries()) g.sb.control.addEntry(LIST, { code, description: `odd key ${i}`, id: 9_000 + i });
    const added = await sync();
    expect(added.outcome.counts).toEqual({ added: odd.length, removed: 0, modified: 0, reappeared: 0, reshaped: 0 });
    // Every odd key, read from the index, matches its current row as stored (so a fetched entry as stored is no change).
    const index = await t.db.withConnection((conn) => CurrentRowIndex.read(conn, g.target));
    const { rows: oddRows } = await t.db.query<{ entry_key: string; entry_hash: string }>(
      `select entry_key, entry_hash from refdata.entries where list_key = $1 and valid_to is null and entry_key = any($2)`,
      [LIST, odd],
    );
    const matched = oddRows.filter((r) => index.match({ entryKey: r.entry_key, digest: r.entry_hash } as NormalizedEntry)).map((r) => r.entry_key);
    expect(matched.sort()).toEqual([...odd].sort());
    const same = await sync();
    expect(same.outcome.status).toBe('unchanged');
    expect(same.written).toBe(0);
    g.sb.control.modifyEntry(LIST, odd[1]!, { description: 'changed' });
    const changed = await sync();
    expect(changed.outcome.counts).toEqual({ added: 0, removed: 0, modified: 1, reappeared: 0, reshaped: 0 });
    expect(changed.written).toBe(2);
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
  }, 120_000);

  it('reads the index as the fetch begins when the run read the list as large at its last sync', async () => {
    await sync();
    g.sb.control.modifyEntry(LIST, 'G0000007', { description: 'changed with the index read early' });
    // The index's COPY waits on this lock; nothing else of the run reads refdata.entries before the entries come.
    const { unlock, held: holder } = await lockEntries();
    let readBeforeFirstPage: boolean | undefined;
    const gated: PageSource = {
      async *pages(request) {
        readBeforeFirstPage ??= await indexReadWaiting(10_000);
        unlock();
        yield* g.fx.client.pages(request);
      },
    };
    try {
      const [run] = await runSync({ db: t.db, sources: [g.target.source], clientFor: () => gated, trigger: 'manual', lists: [LIST] });
      expect(readBeforeFirstPage).toBe(true);
      expect(run!.outcomes.map((o) => [o.status, o.counts])).toEqual([['changed', { added: 0, removed: 0, modified: 1, reappeared: 0, reshaped: 0 }]]);
    } finally {
      unlock();
      await holder;
    }
    const { served, stored } = await currentRows();
    expect(stored).toEqual(served);
  }, 120_000);

  it('finds every current row out of fetch order, also when the last snapshot undercounted the rows it reads', async () => {
    await sync();
    const { rows } = await t.db.query<{ entry_key: string; entry_hash: string }>(
      `select entry_key, entry_hash from refdata.entries where list_key = $1 and valid_to is null order by id desc`,
      [LIST],
    );
    // In the reverse of the order they were written, so each lookup goes to the hash table.
    const fetched = rows.map((r) => ({ entryKey: r.entry_key, digest: r.entry_hash }) as NormalizedEntry);
    const notCurrent = { entryKey: rows[0]!.entry_key, digest: rows[1]!.entry_hash } as NormalizedEntry;
    const matchEvery = async () => {
      const index = await t.db.withConnection((conn) => CurrentRowIndex.read(conn, g.target));
      return { size: index.size, missed: fetched.filter((e) => !index.match(e)).length, unseen: index.unseenIds().length, stray: index.match(notCurrent) };
    };
    const all = { size: rows.length, missed: 0, unseen: 0, stray: false };
    // The last ok snapshot's entry count sizes the arrays.
    expect(await matchEvery()).toEqual(all);
    // Undercounted, the arrays grow past it as the rows come.
    // The count the index is sized from (refdata.target_last_ok), set to `n`.
    const setLastOkCount = (n: number) => t.db.query('update refdata.target_last_ok set entry_count = $2 where list_key = $1', [LIST, n]);
    const { rows: before } = await t.db.query<{ n: number }>('select entry_count as n from refdata.target_last_ok where list_key = $1', [LIST]);
    await setLastOkCount(10);
    try {
      expect(await matchEvery()).toEqual(all);
    } finally {
      await setLastOkCount(before[0]!.n);
    }
  }, 120_000);
});

/** An entry as the index compares it: its key and digest (a base64 sha-256, as refsync's). */
const entryOf = (key: string, content = key): NormalizedEntry =>
  ({ entryKey: key, digest: createHash('sha256').update(content).digest('base64') }) as NormalizedEntry;

/** The index's COPY text of rows: `id TAB key TAB digest` lines. */
const copyLines = (rows: Array<{ id: number; entry: NormalizedEntry }>) =>
  Buffer.from(rows.map((r) => `${r.id}\t${r.entry.entryKey}\t${r.entry.digest}\n`).join(''));

describe('while the index is being read', () => {
  it('answers from the rows read so far, and remembers what matched as the rest comes and the arrays grow', () => {
    const rows = Array.from({ length: 100 }, (_, i) => ({ id: 1_000 + i, entry: entryOf(`K${String(i).padStart(3, '0')}`) }));
    // Sized for none: the arrays grow from 16 rows to 128 while entries are matched.
    const { index, feed, finish } = CurrentRowIndex.filling(7, 0);
    const text = copyLines(rows);
    // The first 50 rows, the COPY's chunk ending inside the 51st line.
    const cut = text.indexOf(copyLines([rows[50]!])) + 10;
    feed(text, 0, cut);
    expect(index.size).toBe(50);
    expect(index.match(rows[10]!.entry)).toBe(true);
    expect(index.match(rows[70]!.entry)).toBe(false);
    expect(index.match(entryOf('K020', 'changed'))).toBe(false);
    feed(text, cut, text.length);
    finish();
    expect(index.size).toBe(100);
    expect(index.match(rows[70]!.entry)).toBe(true);
    // Matched while 50 rows were in, row 10 is still seen after two more growths.
    expect(index.result()).toEqual({ generation: 7, unseenIds: rows.filter((_, i) => i !== 10 && i !== 70).map((r) => r.id) });
  });

  it('keeps every fetched row while the index is held up, and drops the ones it matches once it is in', async () => {
    await sync();
    const { rows } = await t.db.query<{ entry_key: string; entry_hash: string }>(
      `select entry_key, entry_hash from refdata.entries where list_key = $1 and valid_to is null order by id limit 100`,
      [LIST],
    );
    const current = rows.map((r) => ({ entryKey: r.entry_key, digest: r.entry_hash }) as NormalizedEntry);
    const changed = { entryKey: rows[0]!.entry_key, digest: rows[1]!.entry_hash } as NormalizedEntry;
    const { unlock, held: holder } = await lockEntries();
    try {
      await t.db.withConnection(async (conn) => {
        const check = new RowsCheck(conn, g.target, true, 5_000);
        check.readIndexNow();
        expect(await indexReadWaiting(10_000)).toBe(true);
        // Nothing read yet: every row is kept, and checking them again changes nothing.
        expect(current.map((row) => check.kept(row))).toEqual(current);
        expect(check.recheck([...current, changed])).toEqual([...current, changed]);
        expect(check.onlyChangesKept).toBe(false);
        unlock();
        await check.readsEnded();
        // Read whole: of the rows kept, only the one not current as fetched is still to keep.
        expect(check.onlyChangesKept).toBe(true);
        expect(check.recheck([...current, changed])).toEqual([changed]);
        expect(check.kept(current[50]!)).toBeUndefined();
        expect(check.kept(changed)).toEqual(changed);
      });
    } finally {
      unlock();
      await holder;
    }
  }, 120_000);

  it("spills only what the collector's recheck leaves, and first at firstSpillAt's count", async () => {
    const list = getListDefinition(LIST);
    const spills: number[] = [];
    let dropUpTo = -1;
    let firstSpillAt = 30;
    const collector = new ListCollector(list, {
      spillThreshold: 30,
      spill: async (rows) => void spills.push(rows.length),
      // A row the recheck drops: its code's number is at most dropUpTo (what an index has read by then).
      recheck: (rows) => rows.filter((row) => Number(row.code!.slice(1)) > dropUpTo),
      firstSpillAt: () => firstSpillAt,
    });
    const page = (from: number) => listBatch(Array.from({ length: 10 }, (_, i) => ({ code: `C${from + i}`, name: `n${from + i}` })));
    for (const from of [0, 10]) await collector.addBatch(page(from));
    dropUpTo = 24;
    // 30 kept at the third page: the recheck leaves the 5 past C24, and nothing spills.
    await collector.addBatch(page(20));
    expect(spills).toEqual([]);
    // Lowered to 8, the first spill takes the 15 kept by then (C25 to C39).
    firstSpillAt = 8;
    await collector.addBatch(page(30));
    expect(spills).toEqual([15]);
    const collected = await collector.finish();
    expect(collected.entryCount).toBe(40);
    expect(collected.pending).toEqual([]);
  });
});
