import { describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { syncSandbox } from '../reader/fixture.ts';

// A database synced before typed columns existed: `refsync migrate` infers them once from the
// stored history (every version, closed ones included) and brings the views along.
describe('typed columns at the upgrade', () => {
  const t = useTestDatabase();

  it('are inferred from the stored entries, and a second migrate changes nothing', async () => {
    const sb = await useSandbox();
    await syncSandbox(t.db, sb, ['accessorials']);
    sb.control.retypeField('accessorials', 'id');
    await syncSandbox(t.db, sb, ['accessorials']);
    // As a database of the previous release had it: no recorded columns, the seven-column view, no
    // typed as-of function.
    await t.db.query('delete from refdata.list_columns');
    await t.db.query(
      'drop function refdata.accessorials_diff(timestamptz, timestamptz, text, text), refdata.accessorials_as_of(timestamptz, text, text, boolean)',
    );
    await t.db.query('drop view refdata.accessorials_history');
    await t.db.query('drop view refdata.accessorials');
    await t.db.query(`create view refdata.accessorials as
      select environment, variant as variant, entry_key, code, description, payload, valid_from
      from refdata.current_entries where list_key = 'accessorials'`);

    await migrateDatabase(t.db);
    const { rows } = await t.db.query('select field, data_type, first_snapshot_id from refdata.list_columns where list_key = $1 order by field', [
      'accessorials',
    ]);
    expect(rows).toEqual([
      { field: 'code', data_type: 'text', first_snapshot_id: null },
      { field: 'description', data_type: 'text', first_snapshot_id: null },
      // Numbers in the closed versions, strings in the current ones.
      { field: 'id', data_type: 'text', first_snapshot_id: null },
      { field: 'is_charge_code', data_type: 'boolean', first_snapshot_id: null },
      { field: 'long_description', data_type: 'text', first_snapshot_id: null },
      { field: 'stop_type', data_type: 'text', first_snapshot_id: null },
    ]);
    const { rows: typed } = await t.db.query('select count(*)::int as n from refdata.accessorials_history where id is not null and is_charge_code is not null');
    expect(typed[0]!.n).toBe(84);

    const definition = async () =>
      (
        await t.db.query(`select c.oid::int, c.xmin::text, r.xmin::text as rule from pg_class c join pg_rewrite r on r.ev_class = c.oid
                         where c.relnamespace = 'refdata'::regnamespace and c.relkind = 'v' order by c.oid`)
      ).rows;
    const before = await definition();
    await migrateDatabase(t.db);
    expect(await definition()).toEqual(before);
  });
});
