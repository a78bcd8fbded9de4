// A run job's unchanged lists, recorded together (src/sync/batch/apply-batch.ts, migrations 0013 and 0018):
// a fetch with the hash its last ok snapshot had when the job began sends nothing, and one statement
// records all of them after the last, each checked again under its lock. One whose lock another sync
// holds, whose last ok snapshot changed meanwhile or whose views wait, is not recorded: nothing is written for it, and
// `refsync sync` syncs it again the ordinary way (a worker leaves it to a target job: run-job-inline).
import { describe, expect, it } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { targetsFor, type Target } from '../../src/catalog/catalog.ts';
import type { SourceConfig } from '../../src/config/types.ts';
import type { Connection, Database } from '../../src/db/database.ts';
import { ApplyBatch, readLastOk } from '../../src/sync/batch/apply-batch.ts';
import { startRun } from '../../src/sync/run/runs.ts';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { waitFor } from '../queue/helpers.ts';
import { pipelineFixture } from './fixture.ts';

const t = useTestDatabase();

/** The database with every statement sent on a held connection counted (the fetch's own connection). */
function counting(db: Database, sent: string[]): Database {
  const connection = (conn: Connection): Connection => ({
    query: (text, params) => {
      sent.push(text);
      return conn.query(text, params);
    },
    script: (statements) => {
      sent.push(...statements);
      return conn.script(statements);
    },
    begin: () => {
      sent.push('begin');
      return conn.begin();
    },
    transaction: (fn, opening) => {
      sent.push(opening ?? 'begin');
      return conn.transaction(fn, opening);
    },
    alone: (statement) => {
      sent.push(statement);
      return conn.alone(statement);
    },
  });
  return { ...db, kind: db.kind, query: (text, params) => db.query(text, params), withConnection: (fn) => db.withConnection((conn) => fn(connection(conn))) };
}

/** One target per list, in the order given (targetsFor keeps the catalog's order). */
const targetsOf = (source: SourceConfig, lists: ListKey[]): Target[] => lists.map((list) => targetsFor(source, [list])[0]!);

const inRun = async (runId: number, target: Target) =>
  (
    await t.db.query<{ id: number; status: string; changed: boolean; content_hash: string; entry_count: number }>(
      'select id::int, status, changed, content_hash, entry_count from refdata.snapshots where run_id = $1 and list_key = $2 and variant = $3',
      [runId, target.list.key, target.variant],
    )
  ).rows;

describe("a run job's unchanged lists", () => {
  it('sets aside only a fetch with the expected hash, sending nothing for it, and records them all in one statement', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'aside-env' });
    try {
      const [a, b, c] = targetsOf(fx.source, ['accessorials', 'equipment_types', 'shipment_modes']);
      const firsts = new Map<Target, number>();
      for (const target of [a!, b!, c!]) {
        const first = await syncTarget(t.db, fx.client, target, { runId: null });
        expect(first.status).toBe('changed');
        firsts.set(target, first.snapshotId!);
      }
      const batch = new ApplyBatch(await readLastOk(t.db, 'aside-env'), { db: t.db, logger: silentLogger });
      sb.control.modifyEntry('shipment_modes', 'LTL', { description: 'Less-Than-Truckload, patched' });
      const run = await startRun(t.db, { source: fx.source, trigger: 'schedule', targetsTotal: 3, slot: 'aside-1' });

      const sent: string[] = [];
      const outcomeA = await syncTarget(counting(t.db, sent), fx.client, a!, { runId: run.id, batch });
      expect(outcomeA).toMatchObject({ status: 'unchanged', setAside: true });
      expect(outcomeA.snapshotId).toBeUndefined();
      expect(sent).toEqual([]);
      // A changed list is not set aside: it is applied at once, the ordinary way, without first
      // trying the one-statement record of an unchanged fetch (its hash is not the one read).
      const sentC: string[] = [];
      const outcomeC = await syncTarget(counting(t.db, sentC), fx.client, c!, { runId: run.id, batch });
      expect(outcomeC).toMatchObject({ status: 'changed', counts: { modified: 1 } });
      expect(outcomeC.setAside).toBeUndefined();
      expect(sentC[0]).toContain('from refdata.lock_target_state(');
      expect(sentC.filter((s) => s.includes('refdata.record_unchanged_lists('))).toEqual([]);
      const outcomeB = await syncTarget(t.db, fx.client, b!, { runId: run.id, batch });
      expect(outcomeB).toMatchObject({ status: 'unchanged', setAside: true });
      expect(await inRun(run.id, a!)).toEqual([]);

      const recorded = (await batch.apply(t.db, run.id)).ids;
      expect([...recorded.keys()]).toEqual([a, b]);
      for (const target of [a!, b!]) {
        const { rows: last } = await t.db.query<{ content_hash: string; entry_count: number }>(
          'select content_hash, entry_count from refdata.snapshots where id = $1',
          [firsts.get(target)],
        );
        expect(await inRun(run.id, target)).toEqual([{ id: recorded.get(target), status: 'ok', changed: false, ...last[0] }]);
      }
    } finally {
      await fx.client.close();
    }
  });

  it('records neither a list whose lock another sync holds nor one whose last ok snapshot changed since the job read it', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'refused-env' });
    try {
      const [locked, changed, free] = targetsOf(fx.source, ['hazmat', 'piece_types', 'location_types']);
      for (const target of [locked!, changed!, free!]) expect((await syncTarget(t.db, fx.client, target, { runId: null })).status).toBe('changed');
      const batch = new ApplyBatch(await readLastOk(t.db, 'refused-env'), { db: t.db, logger: silentLogger });
      const run = await startRun(t.db, { source: fx.source, trigger: 'schedule', targetsTotal: 3, slot: 'refused-1' });
      for (const target of [locked!, changed!, free!]) {
        expect(await syncTarget(t.db, fx.client, target, { runId: run.id, batch })).toMatchObject({ setAside: true });
      }
      // Another sync changes piece_types after the job read its hash (outside the run).
      sb.control.modifyEntry('piece_types', 'PALLET', { description: 'Pallet, patched' });
      expect((await syncTarget(t.db, fx.client, changed!, { runId: null })).status).toBe('changed');

      // Another sync holds hazmat's lock while the lists are recorded.
      const recorded = await t.db.transaction(async (tx) => {
        await tx.query('select pg_advisory_xact_lock(refdata.target_lock_key($1, $2, $3))', ['refused-env', 'hazmat', '']);
        return (await batch.apply(t.db, run.id)).ids;
      });
      expect(recorded.get(locked!)).toBeNull();
      expect(recorded.get(changed!)).toBeNull();
      expect(recorded.get(free!)).toEqual(expect.any(Number));
      expect(await inRun(run.id, locked!)).toEqual([]);
      expect(await inRun(run.id, changed!)).toEqual([]);
      expect(await inRun(run.id, free!)).toHaveLength(1);
    } finally {
      await fx.client.close();
    }
  });

  it('in `refsync sync`, a list not recorded with the others is synced again the ordinary way, once', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'cli-aside-env' });
    const lists: ListKey[] = ['hazmat', 'piece_types', 'location_types'];
    try {
      expect((await fx.sync(t.db, lists)).status).toBe('succeeded');
      // hazmat's lock is held from before the run until its second sync waits for it.
      const run = await t.db.withConnection(async (conn) => {
        await conn.begin();
        await conn.query('select pg_advisory_xact_lock(refdata.target_lock_key($1, $2, $3))', ['cli-aside-env', 'hazmat', '']);
        const running = fx.sync(t.db, lists);
        await waitFor(async () => {
          // pg_locks is server-wide: other test files' syncs wait for their own locks, so only this database's count.
          const { rows } = await t.db.query<{ n: number }>(
            `select count(*)::int as n from pg_locks
             where database = (select oid from pg_database where datname = current_database()) and locktype = 'advisory' and not granted`,
          );
          return rows[0]!.n > 0;
        }, "hazmat's second sync to wait for its lock");
        await conn.query('commit');
        return running;
      });
      expect(run.status).toBe('succeeded');
      expect(run.outcomes.map((o) => [o.target.list.key, o.status, o.setAside, typeof o.snapshotId])).toEqual([
        ['hazmat', 'unchanged', undefined, 'number'],
        ['location_types', 'unchanged', undefined, 'number'],
        ['piece_types', 'unchanged', undefined, 'number'],
      ]);
      // hazmat was fetched twice in the run (set aside, then again), and recorded once.
      for (const target of targetsOf(fx.source, lists)) expect(await inRun(run.runId, target), target.list.key).toHaveLength(1);
      const hazmatFetches = sb.control.requestLog().filter((r) => r.path.includes('hazmat')).length;
      expect(hazmatFetches).toBe(3);
    } finally {
      await fx.client.close();
    }
  });

  it('records the lists given in their order, each from its fetch and its last ok snapshot, and none whose views wait or whose last ok hash is another', async () => {
    // The statement alone (migration 0018), on snapshots written here: the run job's side is above.
    const env = 'set-env';
    const { rows: run } = await t.db.query<{ id: string }>(
      "insert into refdata.sync_runs (environment, source, trigger, status, targets_total, started_at) values ($1, 's', 'schedule', 'running', 5, now()) returning id",
      [env],
    );
    const ok = (list: string, hash: string, nonconforming: number) =>
      t.db.query(
        `insert into refdata.snapshots (environment, list_key, variant, fetched_at, status, content_hash, entry_count, changed, nonconforming)
         values ($1, $2, '', now(), 'ok', $3, 7, true, $4)`,
        [env, list, hash, nonconforming],
      );
    await ok('hazmat', 'h-old', 0);
    await ok('hazmat', 'h', 2);
    await ok('accessorials', 'a', 0);
    await ok('piece_types', 'p', 0);
    await ok('location_types', 'l-before', 0);
    await t.db.query("insert into refdata.list_views_waiting (list_key, views, dependents) values ('piece_types', '{}', '{}')");
    const fetch = (list: string, hash: string, i: number) => ({
      list_key: list,
      variant: '',
      content_hash: hash,
      entry_count: 7 + i,
      fields: ['code', `f${i}`],
      pages: i,
      duration_ms: 10 * i,
      replaced_values: 0,
      served_digest: `d${i}`,
    });
    const given = [
      fetch('hazmat', 'h', 1),
      fetch('piece_types', 'p', 2),
      fetch('accessorials', 'a', 3),
      fetch('service_levels', 's', 4),
      fetch('location_types', 'l', 5),
    ];
    try {
      const { rows } = await t.db.query<{ list_key: string; snapshot_id: string | null }>(
        'select list_key, variant, snapshot_id from refdata.record_unchanged_lists($1, $2, $3::jsonb)',
        [env, run[0]!.id, JSON.stringify(given)],
      );
      expect(rows.map((r) => [r.list_key, r.snapshot_id === null])).toEqual([
        ['hazmat', false],
        ['piece_types', true],
        ['accessorials', false],
        ['service_levels', true],
        ['location_types', true],
      ]);
      const [hazmat, accessorials] = [Number(rows[0]!.snapshot_id), Number(rows[2]!.snapshot_id)];
      expect(hazmat).toBeLessThan(accessorials);
      const { rows: written } = await t.db.query(
        `select id::int, list_key, run_id::int, status, changed, content_hash, entry_count, fields, pages, duration_ms, nonconforming, served_digest,
                fetched_at is not null as fetched
         from refdata.snapshots where run_id = $1 order by id`,
        [run[0]!.id],
      );
      // A recorded snapshot is its fetch's, unchanged, with the last ok snapshot's nonconforming count.
      const recordedFrom = (id: number, f: (typeof given)[number], nonconforming: number) => ({
        id,
        list_key: f.list_key,
        run_id: Number(run[0]!.id),
        status: 'ok',
        changed: false,
        content_hash: f.content_hash,
        entry_count: f.entry_count,
        fields: f.fields,
        pages: f.pages,
        duration_ms: f.duration_ms,
        nonconforming,
        served_digest: f.served_digest,
        fetched: true,
      });
      expect(written).toEqual([recordedFrom(hazmat, given[0]!, 2), recordedFrom(accessorials, given[2]!, 0)]);
    } finally {
      await t.db.query("delete from refdata.list_views_waiting where list_key = 'piece_types'");
    }
  });
});
