// What an unchanged sync sends to Postgres, statement by statement: the unchanged case is paid by
// every target every hour, so its round trips are counted (docs/performance.md, P2 and P4). Its one
// snapshot row is written by the statement that opens the transaction (migration 0011), and its
// commit does not wait for the WAL flush.
import { describe, expect, it } from 'vitest';
import { targetsFor } from '../../src/catalog/targets.ts';
import type { Connection, Database, Queryable } from '../../src/db/database.ts';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from './fixture.ts';

const t = useTestDatabase();

/** The database with every statement sent on a held connection recorded; `commit` is recorded with the synchronous_commit it ran under. */
function recording(db: Database, sent: string[]): Database {
  const recorded = (q: Queryable): Queryable => ({
    query: (text, params) => {
      sent.push(text.replace(/\s+/g, ' ').trim());
      return q.query(text, params);
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
      return conn.transaction(async (tx, opened) => {
        const result = await fn(recorded(tx), opened);
        const { rows } = await tx.query<{ setting: string }>("select current_setting('synchronous_commit') as setting");
        sent.push(`commit (synchronous_commit ${rows[0]!.setting})`);
        return result;
      }, opening);
    },
  });
  return {
    ...db,
    kind: db.kind,
    query: (text, params) => db.query(text, params),
    transaction: (fn, opening) => db.transaction(fn, opening),
    withConnection: (fn) => db.withConnection((conn) => fn(connection(conn))),
    close: () => db.close(),
  };
}

describe('an unchanged sync, statement by statement', () => {
  it('begins, takes the lock, reads the state and records its snapshot in one message, with synchronous_commit off, and commits: two round trips', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb);
    try {
      const target = targetsFor(fx.source, ['shipment_modes'])[0]!;
      const first = await syncTarget(t.db, fx.client, target, { runId: null });
      expect(first.status).toBe('changed');
      const sent: string[] = [];
      const outcome = await syncTarget(recording(t.db, sent), fx.client, target, { runId: null });
      expect(outcome.status).toBe('unchanged');
      expect(sent.map((s) => s.slice(0, 40))).toEqual(['begin; select now, views_waiting, last_o', 'commit (synchronous_commit off)']);
      expect(sent[0]).toContain("from refdata.lock_target_state_or_record_unchanged('");
      // The row written in SQL is the one an unchanged apply writes: ok, nothing counted, what the fetch measured.
      const { rows } = await t.db.query(
        `select id, status, changed, added, removed, modified, reappeared, reshaped, error, error_code, content_hash, entry_count, fields, pages,
                replaced_values, nonconforming, schema_accepted, run_id, fetched_at > (select fetched_at from refdata.snapshots where id = $2) as later
         from refdata.snapshots where id = $1`,
        [outcome.snapshotId, first.snapshotId],
      );
      const { rows: firstRow } = await t.db.query('select content_hash, entry_count, fields from refdata.snapshots where id = $1', [first.snapshotId]);
      expect(rows).toEqual([
        {
          id: outcome.snapshotId,
          status: 'ok',
          changed: false,
          added: 0,
          removed: 0,
          modified: 0,
          reappeared: 0,
          reshaped: 0,
          error: null,
          error_code: null,
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
});
