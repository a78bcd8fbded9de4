// The list's column lock as a plan takes it: shared by a plan that changes no column, so the applies
// of one list that change nothing (every source's first load once the columns are recorded, nearly
// every resync) hold it at once; exclusive by a plan that adds or widens a column, which waits for
// them and is made again under the lock, and gives it back for the shared one when the apply it
// waited for made the same change. Checked in pg_locks, not by time.
import { describe, expect, it } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { type ColumnType, type FieldValues, readTypedColumns } from '../../src/columns/typed-columns.ts';
import { applyColumnPlan, planListColumns, recordColumnsTogether, type FetchToRecord } from '../../src/columns/recorded-columns.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { waitFor } from '../queue/helpers.ts';
import { pipelineFixture } from '../sync/fixture.ts';

const t = useTestDatabase();
const LIST: ListKey = 'shipment_modes';

const served = (type: ColumnType): FieldValues => ({ type, counts: new Map([[type, 1]]) });

/** This database's advisory locks: the mode of each, and whether it is granted. */
async function advisoryLocks(): Promise<Array<{ mode: string; granted: boolean }>> {
  const { rows } = await t.db.query<{ mode: string; granted: boolean }>(
    `select mode, granted from pg_locks
     where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())
     order by granted desc, mode`,
  );
  return rows;
}

/**
 * Records the fetches' columns together in a transaction of its own (as a run's first loads do) and
 * commits: the plans, and this database's advisory locks as they were just before the commit.
 */
async function recordTogetherAndCommit(fetches: FetchToRecord[]) {
  return t.db.withConnection(async (b) => {
    await b.begin();
    try {
      const recorded = await recordColumnsTogether(b, fetches, new Date());
      const locks = await advisoryLocks();
      await b.query('commit');
      return { recorded, locks };
    } catch (err) {
      await b.query('rollback');
      throw err;
    }
  });
}

describe("a list's column lock", () => {
  it('is shared by plans that change nothing, and taken exclusively, after them, by a plan that adds a column', async () => {
    const fx = pipelineFixture(await useSandbox());
    try {
      expect((await fx.sync(t.db, [LIST])).status).toBe('succeeded');
    } finally {
      await fx.client.close();
    }
    const recorded = await readTypedColumns(t.db, LIST);
    const same = new Map(recorded.map((c) => [c.field, served(c.type)]));
    const withNew = new Map([...same, ['brand_new_field', served('text')]]);

    await t.db.withConnection(async (a) => {
      await a.begin();
      expect((await planListColumns(a, LIST, same)).changes).toEqual([]);
      await t.db.withConnection(async (b) => {
        await b.begin();
        // Taken beside the first: a second exclusive lock would wait here for the first's commit.
        expect((await planListColumns(b, LIST, same)).changes).toEqual([]);
        expect(await advisoryLocks()).toEqual([
          { mode: 'ShareLock', granted: true },
          { mode: 'ShareLock', granted: true },
        ]);
        const adding = t.db.withConnection(async (c) => {
          await c.begin();
          try {
            return await planListColumns(c, LIST, withNew);
          } finally {
            await c.query('rollback');
          }
        });
        await waitFor(async () => (await advisoryLocks()).some((l) => !l.granted), 'the adding plan waiting for the lock', 10_000, 20);
        expect(await advisoryLocks()).toEqual([
          { mode: 'ShareLock', granted: true },
          { mode: 'ShareLock', granted: true },
          { mode: 'ExclusiveLock', granted: false },
        ]);
        await b.query('rollback');
        await a.query('rollback');
        const plan = await adding;
        expect(plan.changes).toEqual([{ field: 'brand_new_field', column: 'brand_new_field', change: 'added', to: 'text' }]);
      });
    });
    expect(await advisoryLocks()).toEqual([]);
  });

  it('is waited for shared by a plan whose change another apply is making, and kept shared once that apply made it', async () => {
    const recorded = await readTypedColumns(t.db, LIST);
    const withField = new Map([...recorded.map((c) => [c.field, served(c.type)] as const), ['second_new_field', served('bigint')]]);
    await t.db.withConnection(async (a) => {
      await a.begin();
      const first = await planListColumns(a, LIST, withField);
      expect(first.changes.map((c) => c.field)).toEqual(['second_new_field']);
      const second = t.db.withConnection(async (b) => {
        await b.begin();
        try {
          const plan = await planListColumns(b, LIST, withField);
          return { plan, locks: await advisoryLocks() };
        } finally {
          await b.query('rollback');
        }
      });
      await waitFor(async () => (await advisoryLocks()).some((l) => !l.granted), 'the second plan waiting for the lock', 10_000, 20);
      // Waited for shared: the apply that holds it is adding the same column (before, the second
      // plan queued for the exclusive lock and then took the shared one).
      expect(await advisoryLocks()).toEqual([
        { mode: 'ExclusiveLock', granted: true },
        { mode: 'ShareLock', granted: false },
      ]);
      // The first records the column (and brings the views along) and commits.
      await applyColumnPlan(a, first, null, new Date());
      await a.query('commit');
      const { plan, locks } = await second;
      expect(plan.changes).toEqual([]);
      expect(locks).toEqual([{ mode: 'ShareLock', granted: true }]);
    });
    expect((await readTypedColumns(t.db, LIST)).map((c) => c.field)).toContain('second_new_field');
  });

  it('is taken for several lists at once by a run applying its first loads together: exclusive where a column is added, waited for shared where another apply holds it exclusive, and kept shared when that apply added the column', async () => {
    const OTHER: ListKey = 'vendor_poc_roles';
    const recorded = await readTypedColumns(t.db, LIST);
    const withField = new Map([...recorded.map((c) => [c.field, served(c.type)] as const), ['third_new_field', served('text')]]);
    const target = { environment: 'together-env', variant: '' };
    await t.db.withConnection(async (a) => {
      await a.begin();
      const first = await planListColumns(a, LIST, withField);
      expect(first.changes.map((c) => c.field)).toEqual(['third_new_field']);
      const together = recordTogetherAndCommit([
        { key: LIST, observed: withField, target, snapshotId: 900_001 },
        { key: OTHER, observed: new Map([['code', served('text')]]), target, snapshotId: 900_002 },
      ]);
      // The first list's lock waited for shared, behind the apply that holds it exclusive: that apply
      // is adding the same column (before, the run queued for the exclusive lock).
      await waitFor(async () => (await advisoryLocks()).some((l) => !l.granted), 'the run waiting for the first list', 10_000, 20);
      expect(await advisoryLocks()).toEqual([
        { mode: 'ExclusiveLock', granted: true },
        { mode: 'ShareLock', granted: false },
      ]);
      await applyColumnPlan(a, first, null, new Date());
      await a.query('commit');
      const { recorded: recordedTogether, locks } = await together;
      expect(recordedTogether.map((r) => r.plan.changes.map((c) => `${c.change} ${c.field}`))).toEqual([[], ['added code']]);
      // The first list's lock held shared: its column was there once it got it.
      expect(locks).toEqual([
        { mode: 'ExclusiveLock', granted: true },
        { mode: 'ShareLock', granted: true },
      ]);
    });
    const { rows } = await t.db.query<{ list_key: string; field: string; first_snapshot_id: number | null; last_snapshot_id: number | null }>(
      `select list_key, field, first_snapshot_id, last_snapshot_id from refdata.list_columns
       where (list_key = $1 and field = 'third_new_field') or list_key = $2 order by list_key`,
      [LIST, OTHER],
    );
    expect(rows).toEqual([
      { list_key: LIST, field: 'third_new_field', first_snapshot_id: null, last_snapshot_id: 900001 },
      { list_key: OTHER, field: 'code', first_snapshot_id: 900002, last_snapshot_id: 900002 },
    ]);
    expect((await readTypedColumns(t.db, OTHER)).map((c) => c.field)).toEqual(['code']);
  });

  it('is taken exclusive after all by a run whose list, once the apply it waited for committed, still lacks a column', async () => {
    const recorded = await readTypedColumns(t.db, LIST);
    const theirs = new Map([...recorded.map((c) => [c.field, served(c.type)] as const), ['fourth_new_field', served('text')]]);
    const ours = new Map([...theirs, ['fifth_new_field', served('text')]]);
    await t.db.withConnection(async (a) => {
      await a.begin();
      const first = await planListColumns(a, LIST, theirs);
      expect(first.changes.map((c) => c.field)).toEqual(['fourth_new_field']);
      const together = recordTogetherAndCommit([{ key: LIST, observed: ours, target: { environment: 'after-env', variant: '' }, snapshotId: 900_003 }]);
      await waitFor(async () => (await advisoryLocks()).some((l) => !l.granted), 'the run waiting for the list', 10_000, 20);
      await applyColumnPlan(a, first, null, new Date());
      await a.query('commit');
      const { recorded, locks } = await together;
      const plan = recorded[0]!.plan;
      // Planned again under the exclusive lock, on the column the other apply added.
      expect(plan.changes).toEqual([{ field: 'fifth_new_field', column: 'fifth_new_field', change: 'added', to: 'text' }]);
      expect(locks).toEqual([{ mode: 'ExclusiveLock', granted: true }]);
    });
    expect((await readTypedColumns(t.db, LIST)).map((c) => c.field)).toEqual(expect.arrayContaining(['fourth_new_field', 'fifth_new_field']));
  });
});
