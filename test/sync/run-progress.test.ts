// A run's progress as each target job refreshes it: counted in one statement while the run goes on
// and nothing failed (refdata.advance_run, migration 0011), worded and closed by refreshRun's own
// transaction otherwise. Snapshots come from real syncs and a recorded failure; the run row is read back.
// Its close: the row, the NOTIFY refdata_runs and the run_completed alert, as listeners get them.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { targetsFor } from '../../src/catalog/catalog.ts';
import type { Database } from '../../src/db/database.ts';
import { ALERT_CHANNEL } from '../../src/alerts/outbox-sql.ts';
import { NOTIFY_LIMIT, RUNS_CHANNEL, failRun, refreshRun, startRun } from '../../src/sync/run/runs.ts';
import { recordFailure } from '../../src/sync/outcome/target-outcome.ts';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { databaseWith, useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { waitFor } from '../queue/helpers.ts';
import { pipelineFixture } from './fixture.ts';

const t = useTestDatabase();

/** The database with every statement it is sent recorded, transactions as "transaction". */
function recording(db: Database, sent: string[]): Database {
  return databaseWith(db, {
    query: (text: string, params?: unknown[]) => {
      sent.push(text);
      return db.query(text, params);
    },
    transaction: (fn, opening) => {
      sent.push('transaction');
      return db.transaction(fn, opening);
    },
  });
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

  it('says a cause that several lists share once, naming them, and one that stopped every list without them', async () => {
    const fx = pipelineFixture(await useSandbox());
    try {
      const fail = (target: ReturnType<typeof targetsFor>[number], message: string, runId: number) =>
        recordFailure(t.db, target, runId, Object.assign(new Error(message), { code: 'network' }), 1);
      const unreachable = 'POST /v2/auth/token/: cannot connect to api.example.com:443 (ECONNREFUSED)';

      // Every list of the run stopped by one cause: it is said once, without the lists.
      const all = targetsFor(fx.source);
      const everyList = await startRun(t.db, { source: fx.source, trigger: 'cli', targetsTotal: all.length, slot: 'shared-all' });
      for (const target of all) await fail(target, unreachable, everyList.id);
      expect(await refreshRun(t.db, everyList.id, fx.source, true)).toBe('failed');
      const error = (await runRow(everyList.id))!.error!;
      expect(error).toBe(`${all.length} of ${all.length} targets did not sync: all ${all.length} lists failed: ${unreachable}`);
      expect(error.split('ECONNREFUSED')).toHaveLength(2);

      // Some of them: the shared cause names its lists, a cause of its own keeps the list's own form.
      const [a, b, c, d] = targetsFor(fx.source, ['accessorials', 'equipment_types', 'hazmat', 'location_types']);
      const some = await startRun(t.db, { source: fx.source, trigger: 'cli', targetsTotal: 4, slot: 'shared-some' });
      for (const target of [b!, d!]) await fail(target, unreachable, some.id);
      await fail(c!, 'GET /v2/shipments/hazmat/ page 1: 502', some.id);
      expect((await syncTarget(t.db, fx.client, a!, { runId: some.id })).status).toMatch(/changed|unchanged/);
      expect(await refreshRun(t.db, some.id, fx.source, true)).toBe('partial');
      expect((await runRow(some.id))!.error).toBe(
        `3 of 4 targets did not sync: 2 lists failed (${b!.list.key}, ${d!.list.key}): ${unreachable}; ${c!.list.key} (failed: GET /v2/shipments/hazmat/ page 1: 502)`,
      );
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

/** The database, with what its transactions' work sends recorded: each statement, and each given to send with the COMMIT. */
function recordingWork(db: Database, sent: { work: string[]; atCommit: string[] }): Database {
  return databaseWith(db, {
    transaction: (fn, opening) =>
      db.transaction((tx, opened, atCommit) => {
        const recorded = {
          query: (text: string, params?: unknown[]) => {
            sent.work.push(text.replace(/\s+/g, ' ').trim());
            return tx.query(text, params);
          },
        } as typeof tx;
        return fn(recorded, opened, (statement) => {
          sent.atCommit.push(statement.replace(/\s+/g, ' ').trim());
          atCommit(statement);
        });
      }, opening),
  });
}

/** A client listening on the run and alert channels; `flushed` waits until every notice committed before it has arrived. */
async function listening(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const notices: Array<{ channel: string; payload: string }> = [];
  client.on('notification', (n) => notices.push({ channel: n.channel, payload: n.payload ?? '' }));
  await client.query(`listen ${RUNS_CHANNEL}; listen ${ALERT_CHANNEL}`);
  return {
    of: (channel: string) => notices.filter((n) => n.channel === channel).map((n) => n.payload),
    // Notices reach a listener in commit order: one sent after the others arrives after them.
    async flushed() {
      await t.db.query(`select pg_notify('${RUNS_CHANNEL}', 'flushed')`);
      await waitFor(() => notices.some((n) => n.payload === 'flushed'), 'the flush notice');
      notices.splice(
        notices.findIndex((n) => n.payload === 'flushed'),
        1,
      );
    },
    close: () => client.end(),
  };
}

/** The run's outcome as its row and snapshots have it, in the documented key order (docs/querying.md, "Running the next job"). */
async function expectedOutcome(runId: number) {
  const { rows: runs } = await t.db.query<Record<string, unknown>>(
    `select id::int as run_id, source, environment, trigger, slot, status, to_json(started_at) #>> '{}' as started_at,
            to_json(finished_at) #>> '{}' as finished_at, targets_total, targets_done, targets_failed, error
     from refdata.sync_runs where id = $1`,
    [runId],
  );
  const { rows: lists } = await t.db.query<Record<string, unknown>>(
    `select list_key, variant, case when status = 'ok' then case when changed then 'changed' else 'unchanged' end else status end as status,
            id::int as snapshot_id, entry_count as entries, added, removed, modified, reappeared, reshaped, error_code
     from refdata.snapshots where run_id = $1 order by list_key, variant`,
    [runId],
  );
  return { ...runs[0]!, lists };
}

describe("a run's close", () => {
  it('writes the row, then sends its NOTIFY and run_completed alert with the COMMIT; once, however often it is closed again', async () => {
    const fx = pipelineFixture(await useSandbox(), { REFSYNC_ENVIRONMENT: 'close-env', REFSYNC_ALERT_ON: 'run_completed' });
    const listener = await listening(t.url);
    try {
      const [a, b] = targetsFor(fx.source, ['accessorials', 'equipment_types']);
      const run = await startRun(t.db, { source: fx.source, trigger: 'cli', targetsTotal: 2 });
      expect((await syncTarget(t.db, fx.client, a!, { runId: run.id })).status).toBe('changed');
      await recordFailure(t.db, b!, run.id, Object.assign(new Error('the upstream answered 500'), { code: 'http_500' }), 1);

      const sent = { work: [] as string[], atCommit: [] as string[] };
      expect(await refreshRun(recordingWork(t.db, sent), run.id, fx.source, true)).toBe('partial');
      // The failed list's reason read (a run with failures only), the update and the outcome it returns
      // in one statement; the NOTIFY and the alert sent with the COMMIT.
      expect(sent.work).toEqual([
        expect.stringMatching(/^select distinct on \(s\.list_key, s\.variant\) /),
        expect.stringMatching(/^with r as \(update refdata\.sync_runs u set /),
      ]);
      expect(sent.atCommit).toEqual([
        expect.stringMatching(/^select pg_notify\('refdata_runs', /),
        expect.stringMatching(/^with inserted as \( insert into refdata\.alerts .* select pg_notify\('refdata_alerts', /),
      ]);

      // Closed again, by a refresh and by a failure: nothing more is written or sent.
      expect(await refreshRun(t.db, run.id, fx.source, true)).toBe('partial');
      await failRun(t.db, run.id, 'database error: gone', fx.source);
      await listener.flushed();

      const outcome = await expectedOutcome(run.id);
      expect(outcome).toMatchObject({
        status: 'partial',
        targets_total: 2,
        targets_done: 2,
        targets_failed: 1,
        error: `1 of 2 targets did not sync: ${b!.list.key} (failed: the upstream answered 500)`,
        lists: [
          { list_key: a!.list.key, status: 'changed', error_code: null },
          { list_key: b!.list.key, status: 'failed', entries: null, error_code: 'http_500' },
        ],
      });
      expect(listener.of(RUNS_CHANNEL)).toEqual([JSON.stringify(outcome)]);
      const { rows: alerts } = await t.db.query<{ id: number; kind: string; environment: string; snapshot_id: number | null; payload: unknown }>(
        'select id::int, kind, environment, snapshot_id, payload from refdata.alerts where run_id = $1',
        [run.id],
      );
      expect(alerts).toEqual([{ id: alerts[0]!.id, kind: 'run_completed', environment: 'close-env', snapshot_id: null, payload: outcome }]);
      expect(listener.of(ALERT_CHANNEL).map((n) => JSON.parse(n))).toEqual([{ id: alerts[0]!.id, environment: 'close-env', kind: 'run_completed' }]);
    } finally {
      await listener.close();
      await fx.client.close();
    }
  });

  it("counts and closes a run none of whose lists failed in the BEGIN's round trip: nothing between it and the COMMIT", async () => {
    const fx = pipelineFixture(await useSandbox(), { REFSYNC_ENVIRONMENT: 'close-ok-env', REFSYNC_ALERT_ON: 'run_completed' });
    const listener = await listening(t.url);
    try {
      const [a, b] = targetsFor(fx.source, ['accessorials', 'equipment_types']);
      const run = await startRun(t.db, { source: fx.source, trigger: 'cli', targetsTotal: 2 });
      expect((await syncTarget(t.db, fx.client, a!, { runId: run.id })).status).toBe('changed');

      // One of two done: counted in the opening, the run still running, nothing told.
      const sent = { work: [] as string[], atCommit: [] as string[] };
      expect(await refreshRun(recordingWork(t.db, sent), run.id, fx.source, true)).toBe('running');
      expect(sent).toEqual({ work: [], atCommit: [] });
      expect(await runRow(run.id)).toEqual({ status: 'running', targets_done: 1, targets_failed: 0, error: null, finished: false });

      // The last one: closed in the opening, told with the COMMIT.
      expect((await syncTarget(t.db, fx.client, b!, { runId: run.id })).status).toBe('changed');
      expect(await refreshRun(recordingWork(t.db, sent), run.id, fx.source, true)).toBe('succeeded');
      expect(sent.work).toEqual([]);
      expect(sent.atCommit).toEqual([
        expect.stringMatching(/^select pg_notify\('refdata_runs', /),
        expect.stringMatching(/^with inserted as \( insert into refdata\.alerts .* select pg_notify\('refdata_alerts', /),
      ]);
      await listener.flushed();

      const outcome = await expectedOutcome(run.id);
      expect(outcome).toMatchObject({ status: 'succeeded', targets_total: 2, targets_done: 2, targets_failed: 0, error: null });
      expect(outcome.lists).toHaveLength(2);
      // The notice and the alert carry the run's outcome alone, not what the opening read before it.
      expect(listener.of(RUNS_CHANNEL)).toEqual([JSON.stringify(outcome)]);
      const { rows: alerts } = await t.db.query<{ payload: unknown }>('select payload from refdata.alerts where run_id = $1', [run.id]);
      expect(alerts).toEqual([{ payload: outcome }]);
      expect(await refreshRun(t.db, run.id, fx.source, true)).toBe('succeeded');
    } finally {
      await listener.close();
      await fx.client.close();
    }
  });

  it("sends a NOTIFY under Postgres's limit when the outcome is larger, its lists left out; the alert keeps them", async () => {
    const fx = pipelineFixture(await useSandbox(), { REFSYNC_ENVIRONMENT: 'close-cut-env', REFSYNC_ALERT_ON: 'run_completed' });
    const listener = await listening(t.url);
    try {
      const targets = targetsFor(fx.source);
      const run = await startRun(t.db, { source: fx.source, trigger: 'cli', targetsTotal: targets.length });
      // Each failure, its own, quotes 200 characters of three bytes into the run's error (cut at RUN_ERROR_BYTES).
      for (const target of targets) {
        const quoted = Object.assign(new Error(`the upstream answered 500 for ${target.list.key}/${target.variant}: ${'\u20ac'.repeat(200)}`), {
          code: 'http_500',
        });
        await recordFailure(t.db, target, run.id, quoted, 1);
      }
      expect(await refreshRun(t.db, run.id, fx.source, true)).toBe('failed');
      await listener.flushed();

      const { lists, ...outcome } = await expectedOutcome(run.id);
      expect(Buffer.byteLength(JSON.stringify({ ...outcome, lists }))).toBeGreaterThan(NOTIFY_LIMIT);
      const [notice] = listener.of(RUNS_CHANNEL);
      expect(Buffer.byteLength(notice!)).toBeLessThanOrEqual(NOTIFY_LIMIT);
      expect(JSON.parse(notice!)).toEqual({ ...outcome, lists_omitted: true });
      const { rows } = await t.db.query<{ payload: unknown }>('select payload from refdata.alerts where run_id = $1', [run.id]);
      expect(rows).toEqual([{ payload: { ...outcome, lists } }]);
    } finally {
      await listener.close();
      await fx.client.close();
    }
  });
});
