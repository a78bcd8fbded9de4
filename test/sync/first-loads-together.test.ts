// A run's small first loads, applied together (src/sync/batch/apply-batch.ts): held while
// the run's lists are fetched, written in a few transactions rather than one each, with the same
// rows, snapshots, columns and views as each list's own first load would have. A list whose lock
// another sync holds, or that another sync loaded meanwhile, is not applied: nothing is written for
// it, and its run syncs it again the ordinary way.
import { describe, expect, it } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { targetsFor, type Target } from '../../src/catalog/catalog.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { ApplyBatch, groupsOf, readLastOk } from '../../src/sync/batch/apply-batch.ts';
import { startRun } from '../../src/sync/run/runs.ts';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { createTestDatabase, dropTestDatabase, useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { waitFor } from '../queue/helpers.ts';
import { count, pipelineFixture } from './fixture.ts';

const t = useTestDatabase();

/** What a first load leaves of a target, without what differs by environment, time or id. */
async function loaded(db: Database, environment: string) {
  const { rows: snapshots } = await db.query(
    `select list_key, variant, status, changed, added, removed, modified, reappeared, reshaped, content_hash, entry_count, fields,
            pages, replaced_values, nonconforming, error, error_code, served_digest, schema_accepted
     from refdata.snapshots where environment = $1 order by list_key, variant`,
    [environment],
  );
  const { rows: entries } = await db.query(
    `select list_key, variant, entry_key, code, description, payload, entry_hash, valid_to,
            (first_snapshot_id = last_snapshot_id) as one_snapshot,
            first_snapshot_id = (select s.id from refdata.snapshots s where s.environment = e.environment and s.list_key = e.list_key and s.variant = e.variant) as own_snapshot
     from refdata.entries e where environment = $1 order by list_key, variant, entry_key`,
    [environment],
  );
  const { rows: view } = await db.query(`select * from refdata.charge_codes where environment = $1 order by version, entry_key`, [environment]);
  const { rows: changes } = await db.query(
    'select count(*)::int as n from refdata.entry_changes c join refdata.snapshots s on s.id = c.snapshot_id where s.environment = $1',
    [environment],
  );
  return { snapshots, entries, view: view.map(({ environment: _e, valid_from: _v, ...row }) => row), changes: changes[0]!.n };
}

/**
 * The per-list views and typed functions as Postgres has them: definitions, columns, comments and
 * grants, and the recorded columns. The snapshot a column's comment names is numbered by the order
 * of the loads, so it is left out, as the day is.
 */
async function catalogOf(db: Database) {
  const { rows: views } = await db.query(
    `select c.relname, pg_get_viewdef(c.oid) as definition, obj_description(c.oid, 'pg_class') as comment, c.relacl::text as grants,
            (select json_agg(json_build_array(a.attname, format_type(a.atttypid, a.atttypmod), col_description(c.oid, a.attnum)) order by a.attnum)
             from pg_attribute a where a.attrelid = c.oid and a.attnum > 0) as columns
     from pg_class c where c.relnamespace = 'refdata'::regnamespace and c.relkind = 'v' order by c.relname`,
  );
  const { rows: functions } = await db.query(
    `select p.oid::regprocedure::text as name, pg_get_functiondef(p.oid) as definition, obj_description(p.oid, 'pg_proc') as comment, p.proacl::text as grants
     from pg_proc p where p.pronamespace = 'refdata'::regnamespace order by 1`,
  );
  const { rows: columns } = await db.query(
    `select list_key, field, column_name, position, data_type, replaced_at is null as current from refdata.list_columns
     order by list_key, field, recorded_at, id`,
  );
  const anySnapshot = (text: unknown) => JSON.stringify(text).replace(/since \d{4}-\d\d-\d\d \(snapshot \d+\)/g, 'since (a snapshot)');
  return { views: anySnapshot(views), functions, columns };
}

/**
 * A run of the sandbox's source in `environment` over `lists`: its fixture, targets, the last ok
 * snapshots it began with, its run row, and a count of a target's snapshots.
 */
async function runOfLists(environment: string, lists: ListKey[]) {
  const fx = pipelineFixture(await useSandbox(), { REFSYNC_ENVIRONMENT: environment });
  const targets = lists.map((list) => targetsFor(fx.source, [list])[0]!);
  const lastOk = await readLastOk(t.db, environment);
  const run = await startRun(t.db, { source: fx.source, trigger: 'schedule', targetsTotal: targets.length, slot: `${environment}-1` });
  const snapshots = (target: Target) => count(t.db, 'snapshots', 'environment = $1 and list_key = $2', [environment, target.list.key]);
  return { fx, targets, lastOk, run, snapshots };
}

describe("a run's first loads applied together", () => {
  it('writes what each list on its own would, in a few transactions, recording no change rows (a baseline)', async () => {
    const sb = await useSandbox();
    const together = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'together-env', REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,unpinned' });
    const alone = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'alone-env', REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,unpinned' });
    // A source whose lists' columns another has recorded: their plans change nothing, made together.
    const again = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'again-env', REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,unpinned' });
    try {
      const run = await together.sync(t.db);
      expect(run.status).toBe('succeeded');
      expect(run.outcomes.every((o) => o.status === 'changed' && o.baseline && o.snapshotId !== undefined && !o.setAside)).toBe(true);
      // Each list on its own, without a run: its own transaction, the ordinary first load.
      for (const target of targetsFor(alone.source)) expect((await syncTarget(t.db, alone.client, target, { runId: null })).status).toBe('changed');

      expect((await again.sync(t.db)).status).toBe('succeeded');

      const a = await loaded(t.db, 'together-env');
      const b = await loaded(t.db, 'alone-env');
      const c = await loaded(t.db, 'again-env');
      expect(c).toEqual(b);
      // Every current column was served by the last source: its last snapshot is one of that source's.
      const { rows: stale } = await t.db.query(
        `select list_key, field from refdata.list_columns where replaced_at is null
           and last_snapshot_id not in (select id from refdata.snapshots where environment = 'again-env')`,
      );
      expect(stale).toEqual([]);
      expect(a.snapshots.length).toBe(targetsFor(together.source).length);
      expect(a.entries.length).toBeGreaterThan(100);
      expect(a.snapshots).toEqual(b.snapshots);
      expect(a.entries).toEqual(b.entries);
      expect(a.entries.every((e) => e.one_snapshot && e.own_snapshot && e.valid_to === null)).toBe(true);
      expect(a.view.length).toBeGreaterThan(0);
      expect(a.view).toEqual(b.view);
      expect(a.changes).toBe(0);
      // Rows written by one transaction share its xmin: the run's first loads took a few, not one each.
      const { rows } = await t.db.query<{ n: number }>(`select count(distinct xmin::text)::int as n from refdata.snapshots where environment = 'together-env'`);
      expect(rows[0]!.n).toBeLessThan(a.snapshots.length / 2);

      // The next sync finds every list unchanged.
      const next = await together.sync(t.db);
      expect(next.outcomes.map((o) => o.status)).toEqual(next.outcomes.map(() => 'unchanged'));
    } finally {
      await Promise.all([together.client.close(), alone.client.close(), again.client.close()]);
    }
  });

  it('leaves a list whose lock another sync holds, or that another sync loaded meanwhile, unwritten, for its run to sync again', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'held-env' });
    try {
      const [a, b, c] = (['accessorials', 'equipment_types', 'shipment_modes'] satisfies ListKey[]).map((list) => targetsFor(fx.source, [list])[0]!) as [
        Target,
        Target,
        Target,
      ];
      // c is loaded by another sync first: the run read no ok snapshot of it, but its apply finds one.
      const lastOk = await readLastOk(t.db, 'held-env');
      expect((await syncTarget(t.db, fx.client, c, { runId: null })).status).toBe('changed');
      const run = await startRun(t.db, { source: fx.source, trigger: 'schedule', targetsTotal: 3, slot: 'held-1' });
      const applied = await t.db.withConnection((other) =>
        other.transaction(async (tx) => {
          // Another sync holds b's lock while the loads are applied.
          await tx.query('select pg_advisory_xact_lock(refdata.target_lock_key($1, $2, $3))', ['held-env', b.list.key, b.variant]);
          const batch = new ApplyBatch(lastOk, { db: t.db, logger: silentLogger });
          for (const target of [a, b, c]) {
            const outcome = await syncTarget(t.db, fx.client, target, { runId: run.id, batch });
            expect(outcome).toMatchObject({ status: 'changed', baseline: true, setAside: true });
            expect(outcome.counts.added).toBeGreaterThan(0);
            expect(outcome.snapshotId).toBeUndefined();
          }
          return (await batch.apply(t.db, run.id)).ids;
        }),
      );
      expect(applied.get(a)).toEqual(expect.any(Number));
      expect(applied.get(b)).toBeNull();
      expect(applied.get(c)).toBeNull();
      const snapshots = async (target: Target) => count(t.db, 'snapshots', 'environment = $1 and list_key = $2', ['held-env', target.list.key]);
      expect([await snapshots(a), await snapshots(b), await snapshots(c)]).toEqual([1, 0, 1]);
      expect(await count(t.db, 'entries', 'environment = $1 and list_key = $2', ['held-env', b.list.key])).toBe(0);
      expect(
        await count(t.db, 'entries', 'environment = $1 and list_key = $2 and first_snapshot_id = $3', ['held-env', a.list.key, applied.get(a)]),
      ).toBeGreaterThan(0);
    } finally {
      await fx.client.close();
    }
  });

  it("waits for the run's other lists before its first apply, and splits them all over the transactions at once", async () => {
    const { fx, targets, lastOk, run } = await runOfLists('gather-env', ['accessorials', 'equipment_types', 'shipment_modes', 'vendor_poc_roles']);
    try {
      // A window longer than the test: the apply starts when the last list comes, not before.
      const batch = new ApplyBatch(lastOk, { db: t.db, logger: silentLogger, parallel: 2, gatherMs: 600_000 });
      batch.expect(targets);
      for (const target of targets) {
        expect(await count(t.db, 'snapshots', 'environment = $1', ['gather-env'])).toBe(0);
        expect(await syncTarget(t.db, fx.client, target, { runId: run.id, batch })).toMatchObject({ setAside: true });
      }
      const applied = (await batch.apply(t.db, run.id)).ids;
      expect(targets.map((target) => applied.get(target))).toEqual(targets.map(() => expect.any(Number)));
      // Rows written by one transaction share its xmin: the lists' transactions are the groups of all
      // four (the first list held went alone before, and the other three after it in one).
      const { rows } = await t.db.query<{ list_key: ListKey; entry_count: number; tx: string }>(
        `select list_key, entry_count, xmin::text as tx from refdata.snapshots where environment = 'gather-env' order by list_key`,
      );
      const byTx = new Map<string, ListKey[]>();
      for (const r of rows) byTx.set(r.tx, [...(byTx.get(r.tx) ?? []), r.list_key]);
      const loads = targets.map((target) => ({ target, collected: { entryCount: rows.find((r) => r.list_key === target.list.key)!.entry_count } }));
      const expected = groupsOf(loads, 2).map((group) => group.map((l) => l.target.list.key).sort());
      expect(expected.map((group) => group.length)).not.toContain(1);
      expect([...byTx.values()].map((group) => group.sort()).sort()).toEqual(expected.sort());
    } finally {
      await fx.client.close();
    }
  });

  it('applies what it holds once its window has passed, while a list slow to come is still awaited', async () => {
    const { fx, targets, lastOk, run, snapshots } = await runOfLists('window-env', ['accessorials', 'equipment_types']);
    const [a, slow] = targets as [Target, Target];
    try {
      const batch = new ApplyBatch(lastOk, { db: t.db, logger: silentLogger, parallel: 2, gatherMs: 50 });
      batch.expect([a, slow]);
      expect(await syncTarget(t.db, fx.client, a, { runId: run.id, batch })).toMatchObject({ setAside: true });
      await waitFor(async () => (await snapshots(a)) === 1, 'the first list applied without the slow one', 10_000, 20);
      batch.done(slow);
      const applied = (await batch.apply(t.db, run.id)).ids;
      expect(applied.get(a)).toEqual(expect.any(Number));
      expect(applied.has(slow)).toBe(false);
      expect(await snapshots(slow)).toBe(0);
    } finally {
      await fx.client.close();
    }
  });

  it("applies the run's last loads beside a running apply, where they waited for it to end", async () => {
    const { fx, targets, lastOk, run, snapshots } = await runOfLists('last-env', ['accessorials', 'equipment_types']);
    const [a, b] = targets as [Target, Target];
    try {
      let batch: ApplyBatch | undefined;
      await t.db.withConnection((other) =>
        other.transaction(async (tx) => {
          // Another sync changes a's columns: the apply that holds a waits for it.
          await tx.query("select pg_advisory_xact_lock(hashtext('refsync.list_columns'), hashtext($1))", [a.list.key]);
          batch = new ApplyBatch(lastOk, { db: t.db, logger: silentLogger, parallel: 2 });
          batch.expect([a, b]);
          for (const target of [a, b]) expect(await syncTarget(t.db, fx.client, target, { runId: run.id, batch })).toMatchObject({ setAside: true });
          // b is the last to come: it is applied on the free connection while a's apply still waits.
          for (let tries = 0; tries < 200 && (await snapshots(b)) === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
          expect([await snapshots(a), await snapshots(b)]).toEqual([0, 1]);
        }),
      );
      const applied = (await batch!.apply(t.db, run.id)).ids;
      expect([applied.get(a), applied.get(b)]).toEqual([expect.any(Number), expect.any(Number)]);
      expect([await snapshots(a), await snapshots(b)]).toEqual([1, 1]);
    } finally {
      await fx.client.close();
    }
  });

  it("widens a column another source recorded as each list's own first load does: a bigint column whose values now have fractions becomes numeric", async () => {
    const sb = await useSandbox();
    const list: ListKey = 'shipment_modes';
    const entries = (weight: (i: number) => number) => ['A', 'B', 'C'].map((code, i) => ({ code, description: `entry ${code}`, weight: weight(i) }));
    const first = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'whole-env' });
    const run = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'fraction-env' });
    try {
      sb.control.setEntries(
        list,
        entries((i) => i + 1),
      );
      expect((await syncTarget(t.db, first.client, targetsFor(first.source, [list])[0]!, { runId: null })).status).toBe('changed');
      sb.control.setEntries(
        list,
        entries((i) => i + 1.5),
      );
      expect((await run.sync(t.db, [list])).status).toBe('succeeded');
      const { rows: columns } = await t.db.query(
        `select data_type, replaced_at is null as current from refdata.list_columns where list_key = $1 and field = 'weight' order by recorded_at, id`,
        [list],
      );
      expect(columns).toEqual([
        { data_type: 'bigint', current: false },
        { data_type: 'numeric', current: true },
      ]);
      const { rows: snapshots } = await t.db.query(`select nonconforming from refdata.snapshots where environment = 'fraction-env'`);
      expect(snapshots).toEqual([{ nonconforming: 0 }]);
      const { rows: view } = await t.db.query(`select weight::text from refdata.${list} where environment = 'fraction-env' order by entry_key`);
      expect(view.map((r) => r.weight)).toEqual(['1.5', '2.5', '3.5']);
    } finally {
      await Promise.all([first.client.close(), run.client.close()]);
    }
  });

  it("leaves the views, their comments and grants, the typed functions and the recorded columns as each list's own first load leaves them", async () => {
    const sb = await useSandbox();
    const env = { REFSYNC_ENVIRONMENT: 'catalog-env', REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,2025-09-01,unpinned' };
    const together = pipelineFixture(sb, env);
    const alone = pipelineFixture(sb, env);
    // Two databases no list was ever synced into: the views have the contract's columns alone.
    const databases = [await createTestDatabase('refsync_t_flt'), await createTestDatabase('refsync_t_flt')];
    const [togetherDb, aloneDb] = await Promise.all(databases.map((d) => openDatabase({ url: d.url, poolSize: 5, applicationName: 'refsync-test' })));
    try {
      expect((await together.sync(togetherDb!)).status).toBe('succeeded');
      for (const target of targetsFor(alone.source)) expect((await syncTarget(aloneDb!, alone.client, target, { runId: null })).status).toBe('changed');
      const a = await catalogOf(togetherDb!);
      const b = await catalogOf(aloneDb!);
      expect(a.columns.length).toBeGreaterThan(40);
      expect(a.views).toContain('typed boolean');
      expect(a.functions.length).toBeGreaterThan(36);
      expect(a).toEqual(b);
    } finally {
      await Promise.all([together.client.close(), alone.client.close(), togetherDb!.close(), aloneDb!.close()]);
      await Promise.all(databases.map((d) => dropTestDatabase(d.name)));
    }
  });
});
