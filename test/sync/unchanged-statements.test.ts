// What an unchanged sync sends to Postgres, statement by statement: the unchanged case is paid by
// every target every hour, so its round trips are counted (docs/performance.md, P2 and P4). The
// commit of its one snapshot row does not wait for the WAL flush, set in the insert itself.
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
  it('begins, takes the lock and reads the state in one message, inserts its snapshot with synchronous_commit off, and commits: three round trips', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb);
    try {
      const target = targetsFor(fx.source, ['shipment_modes'])[0]!;
      expect((await syncTarget(t.db, fx.client, target, { runId: null })).status).toBe('changed');
      const sent: string[] = [];
      const outcome = await syncTarget(recording(t.db, sent), fx.client, target, { runId: null });
      expect(outcome.status).toBe('unchanged');
      expect(sent.map((s) => s.slice(0, 40))).toEqual([
        'begin; select now, views_waiting, last_o',
        'insert into refdata.snapshots (id, run_i',
        'commit (synchronous_commit off)',
      ]);
      expect(sent[0]).toContain("from refdata.lock_target_state('");
    } finally {
      await fx.client.close();
    }
  });
});
