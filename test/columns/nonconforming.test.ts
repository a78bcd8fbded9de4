import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { pipelineFixture } from '../sync/fixture.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';

// A value that does not fit its column's type is nonconforming: NULL in the typed column, kept in
// payload, listed in the view's nonconforming column, counted and alerted; the column keeps its
// type while other current values still fit it. The same on Postgres and on PGlite.
const LIST = 'shipment_modes';

/** One entry per code, each with a field per column type, all fitting. */
const fitting = (code: string, n: number) => ({
  code,
  description: `mode ${code}`,
  flag: n % 2 === 0,
  count: n,
  ratio: n + 0.5,
  at: `2024-06-1${n}T10:00:00Z`,
  label: `label ${n}`,
});

/** Per column type, an odd value as served and what the view's typed column reads for a fitting one. */
const odd = { flag: 'yes', count: '26-28', ratio: 'n/a', at: '2024-02-30T10:00:00Z', label: { text: 'x' } };

type Face = { name: string; open: () => Promise<{ db: Database; close: () => Promise<void> }> };

function nonconformingSuite(face: Face) {
  describe(`nonconforming values (${face.name})`, () => {
    let db: Database;
    let close: () => Promise<void>;
    let sb: Sandbox;
    let fx: ReturnType<typeof pipelineFixture>;

    beforeAll(async () => {
      ({ db, close } = await face.open());
      sb = await useSandbox();
      sb.control.setEntries(LIST, [fitting('A', 1), fitting('B', 2), fitting('C', 3)]);
      // The default REFSYNC_ALERT_ON: nonconforming alerts are on.
      fx = pipelineFixture(sb);
      expect((await fx.sync(db, [LIST])).status).toBe('succeeded');
    });
    afterAll(async () => {
      await fx?.client.close();
      await close?.();
    });

    const types = async () =>
      Object.fromEntries(
        (
          await db.query<{ column_name: string; data_type: string }>(
            `select column_name, data_type from refdata.list_columns where list_key = $1 and replaced_at is null order by position`,
            [LIST],
          )
        ).rows.map((r) => [r.column_name, r.data_type]),
      );
    /** Every row of the view and its history read whole: a cast that raised would fail here. */
    const readAll = async () => {
      const current = await db.query<Record<string, unknown>>(`select * from refdata.${LIST} order by entry_key`);
      await db.query(`select * from refdata.${LIST}_history`);
      return new Map(current.rows.map((r) => [r.entry_key as string, r]));
    };
    const lastSnapshot = async () =>
      (
        await db.query<{ id: number; nonconforming: number }>(
          'select id::int, nonconforming from refdata.snapshots where list_key = $1 order by id desc limit 1',
          [LIST],
        )
      ).rows[0]!;

    it('types every column from its first values', async () => {
      expect(await types()).toEqual({
        code_field: 'text',
        description_field: 'text',
        flag: 'boolean',
        count: 'bigint',
        ratio: 'numeric',
        at: 'timestamptz',
        label: 'text',
      });
      const rows = await readAll();
      expect(rows.get('B')).toMatchObject({ flag: true, count: 2, ratio: '2.5', label: 'label 2', nonconforming: null });
    });

    it("each type's term of the nonconforming column lists a value that is there and does not fit, nothing else", async () => {
      const cases: Array<[type: string, fits: string, odd: string]> = [
        ['boolean', 'true', '"yes"'],
        ['bigint', '42', '"26-28"'],
        ['numeric', '2.5', '"n/a"'],
        ['text', '"label"', '{"text": "x"}'],
        ['date', '"2024-02-29"', '"2024-02-30"'],
        ['timestamptz', '"2024-06-11T10:00:00Z"', '"2024-06-11"'],
      ];
      for (const [type, fits, odd] of cases) {
        const { rows } = await db.query<Record<'fits' | 'odd' | 'json_null' | 'absent', unknown>>(
          `select refdata.nonconforming_${type}('c', $1::jsonb) as fits, refdata.nonconforming_${type}('c', $2::jsonb) as odd,
                  refdata.nonconforming_${type}('c', 'null'::jsonb) as json_null, refdata.nonconforming_${type}('c', '{}'::jsonb -> 'c') as absent`,
          [fits, odd],
        );
        expect(rows[0], type).toEqual({ fits: {}, odd: { c: JSON.parse(odd) }, json_null: {}, absent: {} });
      }
    });

    it('reads the nonconforming column through terms Postgres inlines: the plan has their CASE, not a call', async () => {
      const { rows } = await db.query<{ 'QUERY PLAN': string }>(`explain (verbose) select nonconforming from refdata.${LIST}`);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toContain('CASE WHEN');
      expect(plan).not.toContain('nonconforming_');
    });

    it('an odd value of each type is NULL in its column, kept in payload, listed, counted and alerted; no column changes type', async () => {
      sb.control.modifyEntry(LIST, 'B', odd);
      const run = await fx.sync(db, [LIST]);
      expect(run.status).toBe('succeeded');
      expect(await types()).toMatchObject({ flag: 'boolean', count: 'bigint', ratio: 'numeric', at: 'timestamptz', label: 'text' });
      const rows = await readAll();
      expect(rows.get('B')).toMatchObject({ flag: null, count: null, ratio: null, at: null, label: null, nonconforming: odd });
      expect(rows.get('B')!.payload).toMatchObject(odd);
      expect(rows.get('A')).toMatchObject({ flag: false, count: 1, nonconforming: null });
      const snapshot = await lastSnapshot();
      expect(snapshot.nonconforming).toBe(5);
      const { rows: alerts } = await db.query<{ kind: string; payload: Record<string, unknown> }>(
        'select kind, payload from refdata.alerts where snapshot_id = $1',
        [snapshot.id],
      );
      expect(alerts.map((a) => a.kind)).toEqual(['nonconforming']);
      expect(alerts[0]!.payload).toMatchObject({ count: 5, more: 0, snapshot_nonconforming: 5, list_key: LIST });
      expect(alerts[0]!.payload.entries).toEqual(
        expect.arrayContaining(Object.entries(odd).map(([column, value]) => ({ entry_key: 'B', code: 'B', column, value }))),
      );
      const { rows: history } = await db.query<{ entry_key: string; nonconforming: unknown }>(
        `select entry_key, nonconforming from refdata.${LIST}_history where entry_key = 'B' order by valid_from`,
      );
      expect(history.map((h) => h.nonconforming)).toEqual([null, odd]);
    });

    it('an unchanged fetch keeps the count and alerts nothing more', async () => {
      const before = await db.query<{ n: number }>('select count(*)::int as n from refdata.alerts');
      const run = await fx.sync(db, [LIST]);
      expect(run.outcomes[0]!.status).toBe('unchanged');
      expect((await lastSnapshot()).nonconforming).toBe(5);
      expect((await db.query<{ n: number }>('select count(*)::int as n from refdata.alerts')).rows[0]!.n).toBe(before.rows[0]!.n);
    });

    it('when upstream fixes the values the columns have them again', async () => {
      sb.control.modifyEntry(LIST, 'B', fitting('B', 2));
      await fx.sync(db, [LIST]);
      expect((await readAll()).get('B')).toMatchObject({ flag: true, count: 2, ratio: '2.5', label: 'label 2', nonconforming: null });
      expect((await lastSnapshot()).nonconforming).toBe(0);
    });

    it('a fraction in a bigint column widens it to numeric (the same kind), not a nonconforming value', async () => {
      sb.control.modifyEntry(LIST, 'C', { count: 3.25 });
      await fx.sync(db, [LIST]);
      expect((await types()).count).toBe('numeric');
      expect((await readAll()).get('C')).toMatchObject({ count: '3.25', nonconforming: null });
      expect((await lastSnapshot()).nonconforming).toBe(0);
    });

    it('a field whose every value changed kind is re-typed along the lattice, and reads every value', async () => {
      for (const code of ['A', 'B', 'C']) sb.control.modifyEntry(LIST, code, { flag: `flag ${code}` });
      await fx.sync(db, [LIST]);
      expect((await types()).flag).toBe('jsonb');
      const rows = await readAll();
      expect(rows.get('A')).toMatchObject({ flag: 'flag A', nonconforming: null });
      const { rows: history } = await db.query<{ flag: unknown }>(`select flag from refdata.${LIST}_history where entry_key = 'A' order by valid_from`);
      expect(history.map((h) => h.flag)).toEqual([false, 'flag A']);
    });
  });
}

const t = useTestDatabase();
nonconformingSuite({ name: 'Postgres', open: async () => ({ db: t.db, close: async () => undefined }) });
nonconformingSuite({
  name: 'PGlite',
  open: async () => {
    const db = await openDatabase({ dataDir: 'memory://' });
    await migrateDatabase(db);
    return { db, close: () => db.close() };
  },
});
