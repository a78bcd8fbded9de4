import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import type { SchemaPolicy } from '../../src/config/schema-changes.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { pipelineFixture } from '../sync/fixture.ts';
import { createTestDatabase, dropTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';

// Each schema policy × each kind of change, on Postgres and on PGlite: what syncs, what is held,
// how a hold reads, that it alerts once, and that --accept-schema applies it once.
const baseline = () => ['A', 'B', 'C'].map((code, i) => ({ code, description: `entry ${code}`, flag: i % 2 === 0, weight: i + 1 }));

interface Scenario {
  list: ListKey;
  change: (sb: Sandbox, list: ListKey) => void;
  /** The held snapshot's words for the change, when a policy holds it. */
  label: string;
  heldBy: SchemaPolicy[];
}

const scenarios: Record<string, Scenario> = {
  'a new field': {
    list: 'shipment_modes',
    change: (sb, list) => sb.control.addField(list, 'transit_days', 3),
    label: 'transit_days: new (bigint)',
    heldBy: ['freeze'],
  },
  'one odd value': {
    list: 'piece_types',
    change: (sb, list) => sb.control.modifyEntry(list, 'B', { weight: 'heavy' }),
    label: '',
    heldBy: [],
  },
  'a field that changed kind': {
    list: 'document_types',
    change: (sb, list) => {
      for (const code of ['A', 'B', 'C']) sb.control.modifyEntry(list, code, { flag: code === 'B' ? 'no' : 'yes' });
    },
    label: 'flag: boolean → jsonb',
    heldBy: ['hold-breaking', 'freeze'],
  },
  'a field gone': {
    list: 'location_types',
    change: (sb, list) => sb.control.removeField(list, 'weight'),
    label: 'weight: gone (bigint)',
    heldBy: ['hold-breaking', 'freeze'],
  },
};

type Backend = { name: string; open: () => Promise<{ db: Database; close: () => Promise<void> }> };
const backends: Backend[] = [
  {
    name: 'Postgres',
    open: async () => {
      const { name, url } = await createTestDatabase();
      const db = await openDatabase({ url, poolSize: 4, applicationName: 'refsync-test' });
      const close = async () => {
        await db.close();
        await dropTestDatabase(name);
      };
      return { db, close };
    },
  },
  {
    name: 'PGlite',
    open: async () => {
      const db = await openDatabase({ dataDir: 'memory://' });
      await migrateDatabase(db);
      return { db, close: () => db.close() };
    },
  },
];

for (const backend of backends) {
  for (const policy of ['evolve', 'hold-breaking', 'freeze'] as const) {
    describe(`schema policy ${policy} (${backend.name})`, () => {
      let db: Database;
      let close: () => Promise<void>;
      let sb: Sandbox;
      let fx: ReturnType<typeof pipelineFixture>;

      beforeAll(async () => {
        ({ db, close } = await backend.open());
        sb = await useSandbox();
        fx = pipelineFixture(sb, { REFSYNC_SCHEMA_CHANGES: policy, REFSYNC_ALERT_ON: 'held,schema_changed' });
      });
      afterAll(async () => {
        await fx?.client.close();
        await close?.();
      });

      const columnsOf = async (list: ListKey) =>
        (
          await db.query<{ field: string; data_type: string }>(
            'select field, data_type from refdata.list_columns where list_key = $1 and replaced_at is null order by field',
            [list],
          )
        ).rows;
      const snapshot = async (id: number | undefined) =>
        (
          await db.query<{ status: string; error: string | null; error_code: string | null; schema_accepted: boolean }>(
            'select status, error, error_code, schema_accepted from refdata.snapshots where id = $1',
            [id],
          )
        ).rows[0]!;
      const alertsOf = async (id: number | undefined) =>
        (await db.query<{ kind: string; payload: Record<string, unknown> }>('select kind, payload from refdata.alerts where snapshot_id = $1', [id])).rows;
      const changesOf = async (id: number | undefined) =>
        (await db.query<{ n: number }>('select count(*)::int as n from refdata.entry_changes where snapshot_id = $1', [id])).rows[0]!.n;

      for (const [name, scenario] of Object.entries(scenarios)) {
        const held = scenario.heldBy.includes(policy);
        it(`${name}: ${held ? 'held, alerted once, applied once on --accept-schema' : 'synced'}`, async () => {
          const { list } = scenario;
          sb.control.setEntries(list, baseline());
          expect((await fx.sync(db, [list])).status).toBe('succeeded');
          const before = await columnsOf(list);
          scenario.change(sb, list);
          // With another list in the run: a held list makes the run partial, the other syncs as usual.
          const run = await fx.sync(db, [list, 'hazmat']);
          const outcome = run.outcomes.find((o) => o.target.list.key === list)!;
          expect(run.outcomes.find((o) => o.target.list.key === 'hazmat')!.status).not.toBe('held');
          if (!held) {
            expect(run.status).toBe('succeeded');
            expect(outcome.status).toBe('changed');
            return;
          }
          expect(run.status).toBe('partial');
          expect(outcome.status).toBe('held');
          expect(outcome.errorCode).toBe('held_schema');
          const heldSnapshot = await snapshot(outcome.snapshotId);
          expect(heldSnapshot).toMatchObject({ status: 'held', error_code: 'held_schema' });
          expect(heldSnapshot.error).toBe(`held by schema policy ${policy}: ${scenario.label}; run refsync sync --list ${list} --accept-schema to apply it`);
          // Nothing written: no change rows, the columns (and views) as they were.
          expect(await changesOf(outcome.snapshotId)).toBe(0);
          expect(await columnsOf(list)).toEqual(before);
          const [alert] = await alertsOf(outcome.snapshotId);
          expect(alert).toMatchObject({
            kind: 'held',
            payload: { reason: 'schema', policy, schema_diff: [expect.objectContaining({ field: expect.any(String) })] },
          });

          const again = (await fx.sync(db, [list])).outcomes[0]!;
          expect(again.status).toBe('held');
          expect(await alertsOf(again.snapshotId)).toEqual([]);

          const accepted = (await fx.sync(db, [list], { acceptSchema: true })).outcomes[0]!;
          expect(accepted.status).toBe('changed');
          expect(await snapshot(accepted.snapshotId)).toMatchObject({ status: 'ok', schema_accepted: true });
          expect((await alertsOf(accepted.snapshotId)).map((a) => a.kind)).toEqual(['schema_changed']);
          expect((await alertsOf(accepted.snapshotId))[0]!.payload.accepted).toHaveLength(1);

          // Accepted once: the next fetch of the same list is unchanged, nothing held.
          expect((await fx.sync(db, [list])).outcomes[0]!.status).toBe('unchanged');
        });
      }
    });
  }
}
