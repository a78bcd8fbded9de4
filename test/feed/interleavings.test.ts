// Writers that take their ids in one order and commit in another, a reader polling between every
// step: whatever the interleaving, the reader ends with every committed change exactly once, in
// increasing positions, and never a rolled-back one. An open write transaction that wrote nothing
// to entry_changes still holds the feed back, and lets it go when it ends.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { waitFor } from '../queue/helpers.ts';
import { FeedReader, idsInReadOrder } from './feed-reader.ts';

const t = useTestDatabase();
const WRITERS = 3;
let writers: pg.Client[] = [];
let snapshotId = 0;

beforeAll(async () => {
  writers = await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      const client = new pg.Client({ connectionString: t.url });
      await client.connect();
      return client;
    }),
  );
  const run = await t.db.query<{ id: string }>("insert into refdata.sync_runs (environment, trigger) values ('feed', 'cli') returning id");
  const snap = await t.db.query<{ id: string }>(
    "insert into refdata.snapshots (run_id, environment, list_key, variant, fetched_at, status) values ($1, 'feed', 'shipment_modes', '', now(), 'ok') returning id",
    [run.rows[0]!.id],
  );
  snapshotId = Number(snap.rows[0]!.id);
});
afterAll(async () => {
  await Promise.all(writers.map((w) => w.end()));
});

type Step = { kind: 'insert'; writer: number; rows: number } | { kind: 'end'; writer: number; commit: boolean } | { kind: 'read'; limit: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), writer: fc.nat(WRITERS - 1), rows: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('end' as const), writer: fc.nat(WRITERS - 1), commit: fc.constantFrom(true, true, true, false) }),
  fc.record({ kind: fc.constant('read' as const), limit: fc.integer({ min: 1, max: 6 }) }),
);

/** Runs the steps; returns the ids each committed transaction wrote. */
async function play(steps: Step[], reader: FeedReader): Promise<number[]> {
  const open: Array<number[] | null> = Array.from({ length: WRITERS }, () => null);
  const committed: number[] = [];
  const end = async (w: number, commit: boolean) => {
    await writers[w]!.query(commit ? 'commit' : 'rollback');
    if (commit) committed.push(...open[w]!);
    open[w] = null;
  };
  for (const s of steps) {
    if (s.kind === 'read') {
      await reader.poll();
    } else if (s.kind === 'insert') {
      if (!open[s.writer]) {
        await writers[s.writer]!.query('begin');
        open[s.writer] = [];
      }
      const { rows } = await writers[s.writer]!.query<{ id: string }>(
        `insert into refdata.entry_changes (snapshot_id, environment, list_key, entry_key, change)
         select $1, 'feed', 'shipment_modes', 'k' || g, 'added' from generate_series(1, $2::int) g returning id`,
        [snapshotId, s.rows],
      );
      open[s.writer]!.push(...rows.map((r) => Number(r.id)));
    } else if (open[s.writer]) {
      await end(s.writer, s.commit);
    }
  }
  for (let w = 0; w < WRITERS; w++) if (open[w]) await end(w, true);
  return committed.sort((a, b) => a - b);
}

describe('the change feed under interleaved writers', () => {
  it('gives a polling reader every committed change exactly once, in increasing positions, whatever order writers commit in', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        await t.db.query('delete from refdata.entry_changes');
        const reader = new FeedReader(t.db, 3);
        const committed = await play(steps, reader);
        await reader.readUntil(committed.length);
        const { increasing, ids } = idsInReadOrder(reader);
        expect(increasing).toBe(true);
        expect(ids).toEqual(committed);
      }),
      { numRuns: 60 },
    );
  }, 240_000);

  it('holds back a change committed after an older transaction took its ids, until that one commits', async () => {
    await t.db.query('delete from refdata.entry_changes');
    const [older, later] = writers;
    const insert = (w: pg.Client, key: string) =>
      w.query("insert into refdata.entry_changes (snapshot_id, environment, list_key, entry_key, change) values ($1, 'feed', 'shipment_modes', $2, 'added')", [
        snapshotId,
        key,
      ]);
    await older!.query('begin');
    await insert(older!, 'older');
    await later!.query('begin');
    await insert(later!, 'later');
    await later!.query('commit');
    const reader = new FeedReader(t.db, 10);
    // An id cursor would read 'later' now and never see 'older', whose id is smaller.
    await reader.drain();
    expect(reader.read).toEqual([]);
    await older!.query('commit');
    await reader.readUntil(2);
    const { rows } = await t.db.query<{ entry_key: string }>(
      'select entry_key from refdata.entry_changes where id = any($1::bigint[]) order by array_position($1::bigint[], id)',
      [reader.read.map((r) => r.id)],
    );
    expect(rows.map((r) => r.entry_key)).toEqual(['older', 'later']);
  });

  it('is held by an open write transaction elsewhere, which it names, and let go when that one ends', async () => {
    await t.db.query('delete from refdata.entry_changes');
    const holder = writers[2]!;
    await holder.query("set application_name = 'an idle etl session'");
    await holder.query('begin');
    // A write transaction on any table, refsync's or not: it has a transaction id below the next change's.
    const { rows: held } = await holder.query<{ pid: number }>('select pg_current_xact_id(), pg_backend_pid() as pid');
    await writers[0]!.query(
      "insert into refdata.entry_changes (snapshot_id, environment, list_key, entry_key, change) values ($1, 'feed', 'shipment_modes', 'after', 'added')",
      [snapshotId],
    );
    const reader = new FeedReader(t.db, 10);
    await reader.drain();
    expect(reader.read).toEqual([]);
    // The oldest open write transaction of the cluster: another test file's sync may be older for a moment.
    const holding = await waitFor(
      async () => {
        const { rows } = await t.db.query<{ held_seconds: number; pid: number; application_name: string; state: string }>(
          'select held_seconds, pid, application_name, state from refdata.change_feed_held()',
        );
        return rows[0]!.pid === held[0]!.pid ? rows[0] : undefined;
      },
      'the feed held by the open transaction, named',
      60_000,
    );
    expect(holding).toMatchObject({ application_name: 'an idle etl session', state: 'idle in transaction' });
    expect(holding.held_seconds).toBeGreaterThan(0);
    await holder.query('rollback');
    await reader.readUntil(1);
    expect(reader.read).toHaveLength(1);
    // Other test files' transactions may hold the fence now (it is the cluster's): not this session.
    const { rows: free } = await t.db.query<{ pid: number | null }>('select pid from refdata.change_feed_held()');
    expect(free[0]!.pid).not.toBe(held[0]!.pid);
  });
});
