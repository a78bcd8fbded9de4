import { beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { pipelineFixture } from '../sync/fixture.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';

// A user's views on a list's views never stall the list: its entries, changes and alerts land; a
// column change that needs the views re-created waits (named in the snapshot and a schema_changed
// alert with what depends on them) and is applied by the first sync after they are gone. Nothing
// of the user's is ever dropped.
const LIST = 'equipment_types';

describe("a user's views on a list", () => {
  const t = useTestDatabase();
  let sb: Sandbox;
  let fx: ReturnType<typeof pipelineFixture>;

  beforeAll(async () => {
    sb = await useSandbox();
    fx = pipelineFixture(sb, { REFSYNC_ALERT_ON: 'modified,nonconforming,schema_changed,held,failed' });
    expect((await fx.sync(t.db, [LIST])).status).toBe('succeeded');
    // A dbt-style model on the list, one on its history, and one on the first.
    await t.db.query(`create view public.h33_long_equipment as select entry_key, length_ft from refdata.${LIST} where length_ft > 48`);
    await t.db.query(`create view public.h33_length_history as select entry_key, length_ft, valid_from from refdata.${LIST}_history`);
    await t.db.query('create view public.h33_long_count as select count(*) as n from public.h33_long_equipment');
  });

  const viewType = async (view: string, column: string) =>
    (
      await t.db.query<{ type: string }>(`select format_type(atttypid, atttypmod) as type from pg_attribute where attrelid = $1::regclass and attname = $2`, [
        `refdata.${view}`,
        column,
      ])
    ).rows[0]?.type;
  const recordedType = async () =>
    (
      await t.db.query<{ data_type: string }>(
        `select data_type from refdata.list_columns where list_key = $1 and field = 'length_ft' and replaced_at is null`,
        [LIST],
      )
    ).rows[0]!.data_type;
  const snapshot = async (id: number | undefined) =>
    (await t.db.query<{ status: string; error: string | null }>('select status, error from refdata.snapshots where id = $1', [id])).rows[0]!;
  const alertsOf = async (id: number | undefined) =>
    (
      await t.db.query<{ kind: string; payload: Record<string, unknown> }>('select kind, payload from refdata.alerts where snapshot_id = $1 order by kind', [
        id,
      ])
    ).rows;
  const userViewsRead = async () => {
    for (const v of ['h33_long_equipment', 'h33_length_history', 'h33_long_count']) await t.db.query(`select * from public.${v}`);
  };
  const firstKey = () => (sb.control.getEntries(LIST)[0] as { machine_readable: string }).machine_readable;

  it('one odd value lands as a nonconforming value: no column change, nothing waits, the user views read', async () => {
    sb.control.modifyEntry(LIST, firstKey(), { length_ft: '26-28' });
    const run = await fx.sync(t.db, [LIST]);
    expect(run.status).toBe('succeeded');
    const outcome = run.outcomes[0]!;
    expect(outcome.status).toBe('changed');
    expect(await snapshot(outcome.snapshotId)).toEqual({ status: 'ok', error: null });
    expect((await alertsOf(outcome.snapshotId)).map((a) => a.kind)).toEqual(['modified', 'nonconforming']);
    expect(await recordedType()).toBe('bigint');
    await userViewsRead();
  });

  it('a field that changed kind: entries, changes and alerts land; the re-type waits, named with the dependents; status ok', async () => {
    sb.control.modifyEntry(LIST, firstKey(), { length_ft: 53 });
    sb.control.retypeField(LIST, 'length_ft');
    const run = await fx.sync(t.db, [LIST]);
    expect(run.status).toBe('succeeded');
    const outcome = run.outcomes[0]!;
    expect(outcome.status).toBe('changed');
    const served = sb.control.getEntries(LIST) as Array<{ machine_readable: string; length_ft: unknown }>;
    const { rows: stored } = await t.db.query<{ entry_key: string; length: unknown }>(
      `select entry_key, payload -> 'length_ft' as length from refdata.${LIST}`,
    );
    expect(new Map(stored.map((r) => [r.entry_key, r.length]))).toEqual(new Map(served.map((e) => [e.machine_readable, e.length_ft])));
    const { rows: changes } = await t.db.query<{ n: number }>('select count(*)::int as n from refdata.entry_changes where snapshot_id = $1', [
      outcome.snapshotId,
    ]);
    expect(changes[0]!.n).toBe(served.length);
    const { status, error } = await snapshot(outcome.snapshotId);
    expect(status).toBe('ok');
    expect(error).toBe(
      `the column change length_ft bigint → text waits: refdata.${LIST} and refdata.${LIST}_history must be re-created, and view public.h33_length_history, view public.h33_long_equipment depend on them (refsync never drops them); drop or change them, and the next sync applies it`,
    );
    expect(await recordedType()).toBe('text');
    expect(await viewType(LIST, 'length_ft')).toBe('bigint');
    expect(await viewType(`${LIST}_history`, 'length_ft')).toBe('bigint');
    const schema = (await alertsOf(outcome.snapshotId)).find((a) => a.kind === 'schema_changed')!;
    expect(schema.payload).toMatchObject({
      columns: [{ field: 'length_ft', column: 'length_ft', change: 'widened', from: 'bigint', to: 'text' }],
      views_waiting: {
        views: [`refdata.${LIST}`, `refdata.${LIST}_history`],
        dependents: ['view public.h33_length_history', 'view public.h33_long_equipment'],
      },
    });
    await userViewsRead();
    // The typed column reads the values that still fit its type; the others are listed.
    const { rows } = await t.db.query<{ length_ft: string | null; nonconforming: Record<string, unknown> | null }>(
      `select length_ft, nonconforming from refdata.${LIST}`,
    );
    expect(rows.every((r) => r.length_ft === null && r.nonconforming !== null)).toBe(true);
  });

  it('the next sync while they stay: still waiting, said again in its snapshot, not alerted again', async () => {
    const run = await fx.sync(t.db, [LIST]);
    const outcome = run.outcomes[0]!;
    expect(outcome.status).toBe('unchanged');
    expect((await snapshot(outcome.snapshotId)).error).toMatch(/^the column change length_ft bigint → text waits/);
    expect(await alertsOf(outcome.snapshotId)).toEqual([]);
    expect(await viewType(LIST, 'length_ft')).toBe('bigint');
  });

  it('the first sync after the dependents are gone applies it, and says so', async () => {
    await t.db.query('drop view public.h33_long_count');
    await t.db.query('drop view public.h33_long_equipment');
    await t.db.query('drop view public.h33_length_history');
    const run = await fx.sync(t.db, [LIST]);
    const outcome = run.outcomes[0]!;
    expect(outcome.status).toBe('unchanged');
    expect(await snapshot(outcome.snapshotId)).toEqual({ status: 'ok', error: null });
    expect(await viewType(LIST, 'length_ft')).toBe('text');
    expect(await viewType(`${LIST}_history`, 'length_ft')).toBe('text');
    expect((await t.db.query('select * from refdata.list_views_waiting')).rows).toEqual([]);
    const [schema] = await alertsOf(outcome.snapshotId);
    expect(schema).toMatchObject({ kind: 'schema_changed', payload: { applied_after_wait: [{ column: 'length_ft', from: 'bigint', to: 'text' }] } });
    const { rows } = await t.db.query<{ length_ft: string; served: string }>(`select length_ft, payload ->> 'length_ft' as served from refdata.${LIST}`);
    expect(rows.every((r) => r.length_ft === r.served)).toBe(true);
  });

  it('an upgrade that must re-create a view a user object depends on does not fail: the new shape waits for the first sync after it', async () => {
    // refdata.hazmat as an older refsync made it (a typed column where nonconforming now stands), with a user view on it.
    await fx.sync(t.db, ['hazmat']);
    await t.db.query('drop view refdata.hazmat');
    await t.db.query(
      `create view refdata.hazmat as select environment, variant, entry_key, code, description, payload, valid_from, payload -> 'code' as code_field from refdata.current_entries where list_key = 'hazmat'`,
    );
    await t.db.query('create view public.h33_hazmat as select code from refdata.hazmat');
    await migrateDatabase(t.db);
    const { rows } = await t.db.query<{ views: string[]; dependents: string[] }>(
      `select views, dependents from refdata.list_views_waiting where list_key = 'hazmat'`,
    );
    expect(rows).toEqual([{ views: ['refdata.hazmat'], dependents: ['view public.h33_hazmat'] }]);
    const waiting = (await fx.sync(t.db, ['hazmat'])).outcomes[0]!;
    expect((await snapshot(waiting.snapshotId)).error).toMatch(
      /^the new shape of the views waits: refdata\.hazmat must be re-created, and view public\.h33_hazmat depends on them/,
    );
    await t.db.query('drop view public.h33_hazmat');
    const applied = (await fx.sync(t.db, ['hazmat'])).outcomes[0]!;
    expect(await snapshot(applied.snapshotId)).toEqual({ status: 'ok', error: null });
    expect(await viewType('hazmat', 'nonconforming')).toBe('jsonb');
  });
});
