// What an unchanged sync sends to Postgres, statement by statement: the unchanged case is paid by
// every target every hour, so its round trips are counted (docs/performance.md, P2 and P4). Its one
// snapshot row is written by one statement that is its own transaction (migration 0020), whose
// commit does not wait for the WAL flush unless it also counts the run's progress (a worker's job).
import { describe, expect, it } from 'vitest';
import { targetsFor } from '../../src/catalog/catalog.ts';
import type { Connection, Database, Queryable } from '../../src/db/database.ts';
import { ApplyBatch } from '../../src/sync/batch/apply-batch.ts';
import { startRun } from '../../src/sync/run/runs.ts';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { databaseWith, useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from './fixture.ts';

const t = useTestDatabase();

/** The columns of an unchanged fetch's snapshot that do not come from the fetch: ok, nothing counted. */
const unchangedSnapshot = {
  status: 'ok',
  changed: false,
  added: 0,
  removed: 0,
  modified: 0,
  reappeared: 0,
  reshaped: 0,
  error: null,
  error_code: null,
};

/**
 * The database with every statement sent on a held connection recorded; `commit` is recorded with
 * the synchronous_commit it ran under. A statement sent alone is recorded as `alone: ...`, with the
 * synchronous_commit its transaction ends under: run here in an explicit transaction, so that the
 * setting can still be read before the commit.
 */
function recording(db: Database, sent: string[]): Database {
  const recorded = (q: Queryable): Queryable => ({
    query: (text, params) => {
      sent.push(text.replace(/\s+/g, ' ').trim());
      return q.query(text, params);
    },
    script: (statements) => {
      sent.push(...statements.map((s) => s.replace(/\s+/g, ' ').trim()));
      return q.script(statements);
    },
  });
  const connection = (conn: Connection): Connection => ({
    ...recorded(conn),
    begin: () => {
      sent.push('begin');
      return conn.begin();
    },
    transaction: (fn, opening) => {
      sent.push(opening === undefined ? 'begin' : `begin; ${opening.replace(/\s+/g, ' ').trim()}`);
      return conn.transaction(async (tx, opened, atCommit) => {
        const result = await fn(recorded(tx), opened, atCommit);
        const { rows } = await tx.query<{ setting: string }>("select current_setting('synchronous_commit') as setting");
        sent.push(`commit (synchronous_commit ${rows[0]!.setting})`);
        return result;
      }, opening);
    },
    alone: (statement) => {
      sent.push(`alone: ${statement.replace(/\s+/g, ' ').trim()}`);
      return conn.transaction(async (tx, opened) => {
        const { rows } = await tx.query<{ setting: string }>("select current_setting('synchronous_commit') as setting");
        sent.push(`commit (synchronous_commit ${rows[0]!.setting})`);
        return opened;
      }, statement);
    },
  });
  return databaseWith(db, { withConnection: (fn) => db.withConnection((conn) => fn(connection(conn))) });
}

describe('an unchanged sync, statement by statement', () => {
  it('takes the lock, reads the state and records its snapshot in one statement, its own transaction, with synchronous_commit off: one round trip', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb);
    try {
      const target = targetsFor(fx.source, ['shipment_modes'])[0]!;
      const first = await syncTarget(t.db, fx.client, target, { runId: null });
      expect(first.status).toBe('changed');
      const sent: string[] = [];
      const outcome = await syncTarget(recording(t.db, sent), fx.client, target, { runId: null });
      expect(outcome.status).toBe('unchanged');
      expect(sent.map((s) => s.slice(0, 48))).toEqual(['alone: select list_key, variant, snapshot_id, ru', 'commit (synchronous_commit off)']);
      expect(sent[0]).toContain("from refdata.record_unchanged_lists('");
      expect(sent[0]).toMatch(/, false\)$/);
      // The row written in SQL is the one an unchanged apply writes: ok, nothing counted, what the fetch measured.
      const { rows } = await t.db.query(
        `select id, status, changed, added, removed, modified, reappeared, reshaped, error, error_code, content_hash, entry_count, fields, pages,
                replaced_values, nonconforming, schema_accepted, served_digest, run_id,
                fetched_at > (select fetched_at from refdata.snapshots where id = $2) as later
         from refdata.snapshots where id = $1`,
        [outcome.snapshotId, first.snapshotId],
      );
      const { rows: firstRow } = await t.db.query('select content_hash, entry_count, fields, served_digest from refdata.snapshots where id = $1', [
        first.snapshotId,
      ]);
      expect(firstRow[0]!.served_digest).toEqual(expect.any(String));
      expect(rows).toEqual([
        {
          id: outcome.snapshotId,
          ...unchangedSnapshot,
          ...firstRow[0],
          pages: 1,
          replaced_values: 0,
          nonconforming: 0,
          schema_accepted: false,
          run_id: null,
          later: true,
        },
      ]);
    } finally {
      await fx.client.close();
    }
  });

  it("counts the run's progress in the same statement for a worker's job, whose commit then waits for the WAL flush", async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb);
    try {
      const [a, b] = targetsFor(fx.source, ['accessorials', 'equipment_types']);
      for (const target of [a!, b!]) expect((await syncTarget(t.db, fx.client, target, { runId: null })).status).toBe('changed');
      const run = await startRun(t.db, { source: fx.source, trigger: 'schedule', targetsTotal: 2, slot: 'unchanged-advance' });
      const sent: string[] = [];
      // As a target job syncs its list: a batch of one, which read no last ok snapshot first.
      const first = await syncTarget(recording(t.db, sent), fx.client, a!, { runId: run.id, advanceRun: true, batch: ApplyBatch.ofOne() });
      expect(first).toMatchObject({ status: 'unchanged', runAdvanced: true });
      expect(sent.map((s) => s.slice(0, 48))).toEqual(['alone: select list_key, variant, snapshot_id, ru', 'commit (synchronous_commit on)']);
      expect(sent[0]).toMatch(/, true\)$/);
      const { rows } = await t.db.query('select status, targets_done from refdata.sync_runs where id = $1', [run.id]);
      expect(rows).toEqual([{ status: 'running', targets_done: 1 }]);
      // The run's last target is left to the caller's refresh, which closes the run.
      const last = await syncTarget(t.db, fx.client, b!, { runId: run.id, advanceRun: true, batch: ApplyBatch.ofOne() });
      expect(last.status).toBe('unchanged');
      expect(last.runAdvanced).toBeUndefined();
    } finally {
      await fx.client.close();
    }
  });

  it('a list another sync holds: not recorded alone; its apply records it once the lock is free, through the same writer', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb);
    try {
      const target = targetsFor(fx.source, ['service_levels'])[0]!;
      const first = await syncTarget(t.db, fx.client, target, { runId: null });
      expect(first.status).toBe('changed');
      const sent: string[] = [];
      const { synced } = await t.db.withConnection((holder) =>
        holder.transaction(async (tx) => {
          await tx.query('select pg_advisory_xact_lock(refdata.target_lock_key($1, $2, $3))', [target.source.environment, target.list.key, target.variant]);
          const synced = syncTarget(recording(t.db, sent), fx.client, target, { runId: null });
          // The lock is freed (this transaction ends) once the sync's transaction waits for it: the
          // sync is handed out of the transaction in an object, which the commit does not wait for.
          for (;;) {
            const { rows } = await t.db.query<{ waiting: boolean }>(
              `select exists (select 1 from pg_locks
                 where database = (select oid from pg_database where datname = current_database()) and locktype = 'advisory' and not granted) as waiting`,
            );
            if (rows[0]!.waiting) return { synced };
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }),
      );
      const outcome = await synced;
      expect(outcome.status).toBe('unchanged');
      expect(sent.map((s) => s.slice(0, 48))).toEqual([
        'alone: select list_key, variant, snapshot_id, ru',
        'commit (synchronous_commit off)',
        'begin; select now, views_waiting, last_ok, last ',
        'select w.id from refdata.write_snapshots($1, $2:',
        'commit (synchronous_commit off)',
      ]);
      // The row is the one the statement alone writes: ok, nothing counted, what the fetch measured.
      const { rows } = await t.db.query(
        `select status, changed, added, removed, modified, reappeared, reshaped, error, error_code, content_hash, entry_count, fields,
                served_digest, nonconforming, schema_accepted, run_id
         from refdata.snapshots where id = $1`,
        [outcome.snapshotId],
      );
      const { rows: firstRow } = await t.db.query('select content_hash, entry_count, fields, served_digest from refdata.snapshots where id = $1', [
        first.snapshotId,
      ]);
      expect(firstRow[0]!.served_digest).toEqual(expect.any(String));
      expect(rows).toEqual([
        {
          ...unchangedSnapshot,
          ...firstRow[0],
          nonconforming: 0,
          schema_accepted: false,
          run_id: null,
        },
      ]);
    } finally {
      await fx.client.close();
    }
  });

  it('a changed list: the statement alone writes nothing, and the apply goes on in a transaction of its own', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb);
    try {
      // Synced by the case before, or here: either way the list has rows before it changes.
      const target = targetsFor(fx.source, ['accessorials'])[0]!;
      expect((await syncTarget(t.db, fx.client, target, { runId: null })).status).toMatch(/^(un)?changed$/);
      const before = await t.db.query<{ n: number }>('select count(*)::int as n from refdata.snapshots');
      sb.control.modifyEntry('accessorials', 'APPTDEL', { description: 'Appointment (renamed)' });
      const sent: string[] = [];
      const outcome = await syncTarget(recording(t.db, sent), fx.client, target, { runId: null });
      expect(outcome).toMatchObject({ status: 'changed', counts: { modified: 1 } });
      expect(sent[0]).toContain("from refdata.record_unchanged_lists('");
      expect(sent[2]).toContain('from refdata.lock_target_state(');
      const after = await t.db.query<{ n: number }>('select count(*)::int as n from refdata.snapshots');
      expect(after.rows[0]!.n).toBe(before.rows[0]!.n + 1);
    } finally {
      await fx.client.close();
    }
  });
});
