// A run's progress as each target job refreshes it: counted in one statement while the run goes on
// and nothing failed (refdata.advance_run, migration 0011), worded and closed by refreshRun's own
// transaction otherwise. Snapshots come from real syncs and a recorded failure; the run row is read back.
import { describe, expect, it } from 'vitest';
import { targetsFor } from '../../src/catalog/targets.ts';
import type { Database } from '../../src/db/database.ts';
import { refreshRun, startRun } from '../../src/sync/run/runs.ts';
import { recordFailure } from '../../src/sync/outcome/record-failure.ts';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from './fixture.ts';

const t = useTestDatabase();

/** The database with every statement it is sent recorded, transactions as "transaction". */
function recording(db: Database, sent: string[]): Database {
  return {
    ...db,
    kind: db.kind,
    query: (text: string, params?: unknown[]) => {
      sent.push(text);
      return db.query(text, params);
    },
    transaction: (fn, opening) => {
      sent.push('transaction');
      return db.transaction(fn, opening);
    },
    withConnection: (fn) => db.withConnection(fn),
    close: () => db.close(),
  } as Database;
}

async function runRow(id: number) {
  const { rows } = await t.db.query<{ status: string; targets_done: number; targets_failed: number; error: string | null; finished: boolean }>(
    'select status, targets_done, targets_failed, error, finished_at is not null as finished from refdata.sync_runs where id = $1',
    [id],
  );
  return rows[0];
}

describe("a run's progress", () => {
  it('is counted in one statement while nothing failed; a failure is worded, and the last target closes the run', async () => {
    const fx = pipelineFixture(await useSandbox());
    try {
      const [a, b, c] = targetsFor(fx.source, ['accessorials', 'equipment_types', 'location_types']);
      const run = await startRun(t.db, { source: fx.source, trigger: 'cli', targetsTotal: 3, slot: 'progress-1' });
      // The snapshots as the pipeline writes them: a real sync, and a failure recorded as a job records it.
      const synced = async (target: typeof a) => expect((await syncTarget(t.db, fx.client, target!, { runId: run.id })).status).toBe('changed');
      const failed = (target: typeof a) => recordFailure(t.db, target!, run.id, Object.assign(new Error('the upstream answered 500'), { code: 'http_500' }), 1);

      const sent: string[] = [];
      await synced(a);
      expect(await refreshRun(recording(t.db, sent), run.id)).toBe('running');
      expect(sent).toEqual(['select refdata.advance_run($1) as advanced']);
      expect(await runRow(run.id)).toEqual({ status: 'running', targets_done: 1, targets_failed: 0, error: null, finished: false });

      // A failure is worded by refreshRun's transaction.
      sent.length = 0;
      await failed(b);
      expect(await refreshRun(recording(t.db, sent), run.id)).toBe('running');
      expect(sent).toEqual(['select refdata.advance_run($1) as advanced', 'transaction']);
      expect(await runRow(run.id)).toEqual({
        status: 'running',
        targets_done: 2,
        targets_failed: 1,
        error: `1 of 3 targets did not sync: ${b!.list.key} (failed: the upstream answered 500)`,
        finished: false,
      });

      // The last target closes the run, through the transaction too.
      sent.length = 0;
      await synced(c);
      expect(await refreshRun(recording(t.db, sent), run.id)).toBe('partial');
      expect(sent).toEqual(['select refdata.advance_run($1) as advanced', 'transaction']);
      expect(await runRow(run.id)).toMatchObject({ status: 'partial', targets_done: 3, targets_failed: 1, finished: true });

      // A run closed is left as it is.
      expect(await refreshRun(t.db, run.id)).toBe('partial');
    } finally {
      await fx.client.close();
    }
  });

  it('closes a run of one target at its only refresh', async () => {
    const fx = pipelineFixture(await useSandbox());
    try {
      const run = await startRun(t.db, { source: fx.source, trigger: 'cli', targetsTotal: 1, slot: 'progress-2' });
      const target = targetsFor(fx.source, ['shipment_modes'])[0]!;
      expect((await syncTarget(t.db, fx.client, target, { runId: run.id })).status).toBe('changed');
      expect(await refreshRun(t.db, run.id)).toBe('succeeded');
      expect(await runRow(run.id)).toEqual({ status: 'succeeded', targets_done: 1, targets_failed: 0, error: null, finished: true });
    } finally {
      await fx.client.close();
    }
  });
});
