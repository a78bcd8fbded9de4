// refdata.change_feed serves every change exactly once to a job that passes back its last position,
// however syncs overlap: a large apply that took its ids first and commits last, small syncs that
// commit in between, readers polling all the while, directly and through PgBouncer in transaction
// mode. `entry_changes.id` as a cursor skipped the large apply's changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { targetsFor } from '../../src/catalog/catalog.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { syncTarget, type PageSource } from '../../src/sync/sync-target.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { pgbouncerInstalled, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { pipelineFixture, useGeneratedList } from '../sync/fixture.ts';
import { FeedReader, idsInReadOrder, recordedIds } from './feed-reader.ts';

const t = useTestDatabase();
const LIST = 'package_types';
const ENTRIES = 12_000;
/** Pages are 1,000 entries: the index is in before the first spill, so the resync streams (its transaction open from page 3 to the end). */
const tuning = { spillThreshold: 3_000, indexAfterEntries: 500 };
const g = useGeneratedList(LIST, ENTRIES);

const bouncing = pgbouncerInstalled();
if (!bouncing && process.env.CI) throw new Error('pgbouncer is not installed (.ci/run installs the Debian package)');
let bouncer: PgBouncer | undefined;
let pooled: Database | undefined;
beforeAll(async () => {
  if (!bouncing) return;
  bouncer = await startPgBouncer(t.url);
  pooled = await openDatabase({ url: bouncer.urlFor(t.url), poolSize: 2, applicationName: 'refsync-test-feed-pooled' });
});
afterAll(async () => {
  await pooled?.close();
  await bouncer?.stop();
});

/** Readers poll the feed over and over, each in its own loop, until stopped; then they drain it. */
function pollingReaders(dbs: Database[], pageSize: number) {
  const readers = dbs.map((db) => new FeedReader(db, pageSize));
  let stopped = false;
  const loops = readers.map(async (r) => {
    while (!stopped) {
      await r.poll();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  });
  return {
    readers,
    /** Stops the loops; then each reader polls until it has read `count` changes in all. */
    async stop(count: number) {
      stopped = true;
      await Promise.all(loops);
      for (const r of readers) await r.readUntil(count);
    },
  };
}

describe('the change feed beside overlapping syncs', () => {
  it('serves every change of a large apply and of small syncs committing during it exactly once, to readers polling all along', async () => {
    const [large] = targetsFor(g.fx.source, [LIST]);
    // The small syncs have an upstream client of their own, as another run's would be.
    const other = pipelineFixture(g.sb);
    const [small] = targetsFor(other.source, ['shipment_modes']);
    expect(await syncTarget(t.db, g.fx.client, large!, { runId: null, tuning })).toMatchObject({ status: 'changed', baseline: true });
    await syncTarget(t.db, other.client, small!, { runId: null });

    const readerDbs = [t.db, t.db, ...(pooled ? [pooled] : [])];
    const polling = pollingReaders(readerDbs, 500);
    g.sb.control.changeGenerated(LIST, { everyNth: 1 });
    // Rows the feed served from page 6 on, while the large apply's transaction was open and written to.
    let servedWhileOpen = 0;
    let smallSyncs = 0;
    // On pages 4 to 10 of the large fetch (its transaction open from the first spill), small syncs commit.
    const interleaved: PageSource = {
      async *pages(request) {
        let page = 0;
        for await (const entries of g.fx.client.pages(request)) {
          page += 1;
          if (page >= 4 && page <= 10) {
            g.sb.control.modifyEntry('shipment_modes', 'LTL', { description: `Less Than Truckload, edit ${page}` });
            const outcome = await syncTarget(t.db, other.client, small!, { runId: null });
            expect(outcome.counts.modified).toBe(1);
            smallSyncs += 1;
            // Nothing may be served: every change so far is the open apply's or a small sync's after it.
            const probe = new FeedReader(t.db, 100_000);
            await probe.drain();
            if (page >= 6) servedWhileOpen += probe.read.length;
          }
          yield entries;
        }
      },
    };
    const applied = await syncTarget(t.db, interleaved, large!, { runId: null, tuning });
    const recorded = await recordedIds(t.db);
    await polling.stop(recorded.length);
    await other.client.close();

    expect(applied.counts.modified).toBe(ENTRIES);
    expect(smallSyncs).toBe(7);
    // While the large apply was open, the small syncs' committed changes were held back, not passed.
    expect(servedWhileOpen).toBe(0);
    expect(recorded.length).toBe(ENTRIES + 7);
    for (const reader of polling.readers) {
      const { increasing, ids } = idsInReadOrder(reader);
      expect(increasing).toBe(true);
      expect(ids).toEqual(recorded);
    }
    // A snapshot's changes come together, in id order.
    const order = polling.readers[0]!.read.map((r) => r.id);
    const largeIds = await idsOfList(LIST);
    const firstLarge = order.indexOf(largeIds[0]!);
    expect(order.slice(firstLarge, firstLarge + largeIds.length)).toEqual(largeIds);
  }, 300_000);
});

async function idsOfList(list: string): Promise<number[]> {
  const { rows } = await t.db.query<{ id: string }>('select id from refdata.entry_changes where list_key = $1 order by id', [list]);
  return rows.map((r) => Number(r.id));
}
