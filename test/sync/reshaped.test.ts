import { beforeAll, describe, expect, it } from 'vitest';
import { useChangeNotices } from '../helpers/change-notices.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from './fixture.ts';

// A field that appears in (or leaves) the whole list is a change of shape, not an edit of every
// entry: those entries are `reshaped`, and modified counts, alerts and NOTIFY count real edits only.
const LIST = 'shipment_modes';

describe('reshaped is not modified', () => {
  const t = useTestDatabase();
  let sb: Sandbox;
  let fx: ReturnType<typeof pipelineFixture>;

  beforeAll(async () => {
    sb = await useSandbox();
    sb.control.setEntries(
      LIST,
      ['A', 'B', 'C'].map((code) => ({ code, description: `mode ${code}` })),
    );
    fx = pipelineFixture(sb, { REFSYNC_ALERT_ON: 'modified,schema_changed' });
    expect((await fx.sync(t.db, [LIST])).status).toBe('succeeded');
  });
  const noticesOf = useChangeNotices(() => t.url);

  const changesOf = async (snapshotId: number | undefined) =>
    (
      await t.db.query<{ entry_key: string; change: string; changed_fields: string[] | null }>(
        'select entry_key, change, changed_fields from refdata.entry_changes where snapshot_id = $1 order by entry_key',
        [snapshotId],
      )
    ).rows;
  const snapshotCounts = async (snapshotId: number | undefined) =>
    (await t.db.query<{ modified: number; reshaped: number }>('select modified, reshaped from refdata.snapshots where id = $1', [snapshotId])).rows[0];
  const alertsOf = async (snapshotId: number | undefined) =>
    Object.fromEntries(
      (
        await t.db.query<{ kind: string; payload: Record<string, unknown> }>('select kind, payload from refdata.alerts where snapshot_id = $1', [snapshotId])
      ).rows.map((r) => [r.kind, r.payload]),
    );
  it('a field added to every entry reshapes them; the one real edit among them is modified and names both fields', async () => {
    sb.control.addField(LIST, 'transit_days', 3);
    sb.control.modifyEntry(LIST, 'B', { description: 'mode B (edited)' });
    const outcome = (await fx.sync(t.db, [LIST])).outcomes[0]!;
    expect(outcome.counts).toMatchObject({ modified: 1, reshaped: 2 });
    expect(await changesOf(outcome.snapshotId)).toEqual([
      { entry_key: 'A', change: 'reshaped', changed_fields: ['transit_days'] },
      { entry_key: 'B', change: 'modified', changed_fields: ['description', 'transit_days'] },
      { entry_key: 'C', change: 'reshaped', changed_fields: ['transit_days'] },
    ]);
    expect(await snapshotCounts(outcome.snapshotId)).toEqual({ modified: 1, reshaped: 2 });
    const alerts = await alertsOf(outcome.snapshotId);
    expect(alerts.modified).toMatchObject({ count: 1, entries: [{ entry_key: 'B' }], more: 0 });
    expect(alerts.schema_changed).toMatchObject({ fields_added: ['transit_days:number'], reshaped: 2 });
    expect(await noticesOf(outcome.snapshotId)).toMatchObject([{ modified: 1, reshaped: 2, added: 0, removed: 0 }]);
    // The history rows of a reshape are versions like any other.
    const { rows } = await t.db.query<{ n: number }>(`select count(*)::int as n from refdata.entries where list_key = $1 and entry_key = 'A'`, [LIST]);
    expect(rows[0]!.n).toBe(2);
  });

  it('a field that leaves the list reshapes every entry; no modified alert', async () => {
    sb.control.removeField(LIST, 'transit_days');
    const outcome = (await fx.sync(t.db, [LIST])).outcomes[0]!;
    expect(outcome.counts).toMatchObject({ modified: 0, reshaped: 3 });
    expect((await changesOf(outcome.snapshotId)).map((c) => c.change)).toEqual(['reshaped', 'reshaped', 'reshaped']);
    const alerts = await alertsOf(outcome.snapshotId);
    expect(alerts.modified).toBeUndefined();
    expect(alerts.schema_changed).toMatchObject({ fields_removed: ['transit_days:number'], reshaped: 3 });
    expect(await noticesOf(outcome.snapshotId)).toMatchObject([{ modified: 0, reshaped: 3 }]);
  });

  it('an entry gaining a field that other entries already have is modified: the field did not appear in the list', async () => {
    sb.control.modifyEntry(LIST, 'A', { note: 'x' });
    await fx.sync(t.db, [LIST]);
    sb.control.modifyEntry(LIST, 'B', { note: 'y' });
    const outcome = (await fx.sync(t.db, [LIST])).outcomes[0]!;
    expect(await changesOf(outcome.snapshotId)).toEqual([{ entry_key: 'B', change: 'modified', changed_fields: ['note'] }]);
  });
});
