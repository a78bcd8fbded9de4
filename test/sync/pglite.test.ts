import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { targetsFor } from '../../src/catalog/catalog.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { failRun, refreshRun } from '../../src/sync/run/runs.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { count, pipelineFixture } from './fixture.ts';

// The embedded database runs the same pipeline code: the core of the Postgres suite, on PGlite.
describe('the pipeline on embedded PGlite', () => {
  let db: Database;
  let sb: Sandbox;
  let fx: ReturnType<typeof pipelineFixture>;

  beforeAll(async () => {
    db = await openDatabase({ dataDir: 'memory://' });
    await migrateDatabase(db);
    sb = await useSandbox();
    fx = pipelineFixture(sb, { REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,2025-09-01' });
  });
  afterAll(async () => {
    await fx?.client.close();
    await db?.close();
  });

  it('loads every target, then records an unchanged sync without writing rows', async () => {
    const first = await fx.sync(db);
    expect(first.status).toBe('succeeded');
    const total = first.outcomes.reduce((n, o) => n + o.entryCount, 0);
    expect(await count(db, 'current_entries')).toBe(total);
    const second = await fx.sync(db);
    expect(second.outcomes.every((o) => o.status === 'unchanged')).toBe(true);
    expect(await count(db, 'entries')).toBe(total);
    expect(await count(db, 'snapshots')).toBe(2 * targetsFor(fx.source).length);
  });

  it('applies added, removed and modified entries with history and change rows', async () => {
    sb.control.addEntry('charge_codes', { code: 'NEWCC', description: 'New charge' }, { version: '2025-09-01' });
    sb.control.removeEntry('equipment_types', sb.control.getEntries('equipment_types').map((e) => (e as { machine_readable: string }).machine_readable)[0]!);
    sb.control.modifyEntry('shipment_modes', 'LTL', { description: 'Less than truckload (edited)' });
    const run = await fx.sync(db);
    const changed = run.outcomes
      .filter((o) => o.status === 'changed')
      .map((o) => `${o.target.list.key}/${o.target.variant}`)
      .sort();
    expect(changed).toEqual(['charge_codes/2025-09-01', 'equipment_types/', 'shipment_modes/']);
    const { rows } = await db.query<{ list_key: string; change: string }>('select list_key, change from refdata.entry_changes order by list_key');
    expect(rows).toEqual([
      { list_key: 'charge_codes', change: 'added' },
      { list_key: 'equipment_types', change: 'removed' },
      { list_key: 'shipment_modes', change: 'modified' },
    ]);
    expect(await count(db, 'alerts', "kind = 'added'")).toBe(1);
    const { rows: ltl } = await db.query<{ description: string }>("select description from refdata.shipment_modes where code = 'LTL'");
    expect(ltl[0]!.description).toBe('Less than truckload (edited)');
  });

  it('a list larger than the spill threshold: staged (no transaction may stay open on the one session), first load and resync', async () => {
    const tuning = { spillThreshold: 1_000 };
    // The list as if never loaded, then served as 3,000 generated entries.
    for (const table of ['alerts', 'entry_changes', 'entries', 'snapshots']) await db.query(`delete from refdata.${table} where list_key = 'accessorials'`);
    sb.control.setGenerated('accessorials', 3_000);
    const first = (await fx.sync(db, ['accessorials'], { tuning })).outcomes[0]!;
    // PGlite stages a large first load too: the streamed first load needs a session of its own.
    expect(first).toMatchObject({ status: 'changed', baseline: true, entryCount: 3_000 });
    expect(await count(db, 'entries', "list_key = 'accessorials' and valid_to is null")).toBe(3_000);
    expect(first.counts).toEqual({ added: 3_000, removed: 0, modified: 0, reappeared: 0, reshaped: 0 });
    expect(await count(db, 'entry_changes', "list_key = 'accessorials'")).toBe(0);
    sb.control.changeGenerated('accessorials', { everyNth: 100 });
    const again = (await fx.sync(db, ['accessorials'], { tuning })).outcomes[0]!;
    expect(again.counts).toEqual({ added: 0, removed: 0, modified: 30, reappeared: 0, reshaped: 0 });
    expect(await count(db, 'entries', "list_key = 'accessorials' and valid_to is null")).toBe(3_000);
    expect(await count(db, 'entry_changes', "list_key = 'accessorials'")).toBe(30);
  });
  it('closes a run with a failing list as partial: its row, and its run_completed alert once (what is sent with the COMMIT runs a statement at a time here)', async () => {
    const alerting = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'pglite-close', REFSYNC_ALERT_ON: 'run_completed' });
    sb.control.setFaults({ errorCount: 50, paths: ['hazmat'] });
    try {
      const run = await alerting.sync(db, ['hazmat', 'shipment_modes']);
      expect(run.status).toBe('partial');
      const { rows } = await db.query<{ status: string; targets_done: number; targets_failed: number; finished: boolean }>(
        'select status, targets_done, targets_failed, finished_at is not null as finished from refdata.sync_runs where id = $1',
        [run.runId],
      );
      expect(rows).toEqual([{ status: 'partial', targets_done: 2, targets_failed: 1, finished: true }]);
      // Closed again, by a refresh and by a failure: no second alert.
      expect(await refreshRun(db, run.runId, alerting.source, true)).toBe('partial');
      await failRun(db, run.runId, 'database error: gone', alerting.source);
      const { rows: alerts } = await db.query<{ kind: string; payload: { status: string; lists: Array<{ list_key: string; status: string }> } }>(
        'select kind, payload from refdata.alerts where run_id = $1',
        [run.runId],
      );
      expect(alerts).toHaveLength(1);
      expect(alerts[0]).toMatchObject({ kind: 'run_completed', payload: { run_id: run.runId, status: 'partial', targets_failed: 1 } });
      expect(alerts[0]!.payload.lists.map((l) => [l.list_key, l.status])).toEqual([
        ['hazmat', 'failed'],
        ['shipment_modes', 'changed'],
      ]);
    } finally {
      sb.control.clearFaults();
      await alerting.client.close();
    }
  });
});
