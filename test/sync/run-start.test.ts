// `refsync sync` starts each source's run beside its first fetches (run-sync.ts): a fetch needs no
// run, its apply does and waits for it. The fetches begin before the run row exists, and a start
// that fails, however late, has no list applied and no failure recorded: the sync throws its error.
import { describe, expect, it } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import type { SourceConfig } from '../../src/config/types.ts';
import type { Database } from '../../src/db/database.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import type { PageSource } from '../../src/sync/sync-target.ts';
import { databaseWith, useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxSource } from '../helpers/source.ts';
import { count, pipelineFixture } from './fixture.ts';

const t = useTestDatabase();

/** The database, with `onRunRow` awaited before each run row is inserted (it may throw: the insert then fails). */
function watchingStarts(db: Database, onRunRow: (source: string) => Promise<void>): Database {
  return databaseWith(db, {
    query: async (text: string, params?: unknown[]) => {
      if (/insert into refdata\.sync_runs/.test(text)) await onRunRow(String(params?.[1]));
      return db.query(text, params);
    },
  });
}

/** The client, telling when a list's fetch begins and when its pages are all read (or failed). */
function watchingFetches(client: PageSource, on: { began: () => void; ended: () => void }): PageSource {
  return {
    async *pages(request) {
      on.began();
      try {
        yield* client.pages(request);
      } finally {
        on.ended();
      }
    },
  };
}

const sync = (db: Database, sources: SourceConfig[], client: PageSource, lists: ListKey[]) =>
  runSync({ db, sources, clientFor: () => client, trigger: 'cli', lists });

/** What a sync left in an environment: its runs, its snapshots, and whether a changed entry is current. */
async function footprint(environment: string) {
  const { rows } = await t.db.query<{ status: string }>('select status from refdata.sync_runs where environment = $1 order by id', [environment]);
  const current = await count(t.db, 'entries', "environment = $1 and list_key = 'shipment_modes' and payload->>'description' = 'Edited' and valid_to is null", [
    environment,
  ]);
  return { runs: rows.map((r) => r.status), snapshots: await count(t.db, 'snapshots', 'environment = $1', [environment]), edited: current };
}

describe("refsync sync's run start", () => {
  it('goes on beside the first fetches: a fetch begins before the run row exists, and every list is recorded in the run', async () => {
    const fx = pipelineFixture(await useSandbox(), { REFSYNC_ENVIRONMENT: 'start-beside' });
    try {
      const events: string[] = [];
      const db = watchingStarts(t.db, async () => {
        events.push('run row');
      });
      const client = watchingFetches(fx.client, { began: () => events.push('fetch'), ended: () => undefined });
      const [run] = await sync(db, [fx.source], client, ['shipment_modes', 'accessorials']);
      expect(events[0]).toBe('fetch');
      expect(run!.status).toBe('succeeded');
      const { rows } = await t.db.query<{ list_key: string }>('select list_key from refdata.snapshots where run_id = $1 order by list_key', [run!.runId]);
      expect(rows.map((r) => r.list_key)).toEqual(['accessorials', 'shipment_modes']);
    } finally {
      await fx.client.close();
    }
  });

  it('that fails once the lists are fetched: the sync throws its error, no list is applied and no failure recorded', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'start-fails' });
    try {
      expect((await fx.sync(t.db, ['shipment_modes', 'hazmat'])).status).toBe('succeeded');
      const before = await footprint('start-fails');
      sb.control.modifyEntry('shipment_modes', 'LTL', { description: 'Edited' });
      sb.control.setFaults({ errorCount: 50, paths: ['hazmat'] });
      sb.control.resetRequestLog();
      // The run row is refused once both fetches are over (one changed, ready to apply, one failed),
      // or at once if none began before it (the start first, as before the fetches went beside it).
      let began = 0;
      let ended = 0;
      let fetched!: () => void;
      const bothFetched = new Promise<void>((resolve) => (fetched = resolve));
      const fresh = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'start-fails' });
      const client = watchingFetches(fresh.client, { began: () => ++began, ended: () => ++ended === 2 && fetched() });
      const refused = new Error('the run row could not be written');
      const db = watchingStarts(t.db, async () => {
        if (began > 0) await bothFetched;
        throw refused;
      });
      await expect(sync(db, [fx.source], client, ['shipment_modes', 'hazmat'])).rejects.toBe(refused);
      await fresh.client.close();
      expect(await footprint('start-fails')).toEqual(before);
      expect(before).toMatchObject({ runs: ['succeeded'], edited: 0 });
      // A fresh client's fetches logged in once, as ever: the start sends nothing upstream of its own.
      expect(sb.control.requestLog().filter((e) => e.path === '/v2/auth/token/')).toHaveLength(1);

      // The next sync applies the change and records the failure, in its run.
      sb.control.clearFaults();
      sb.control.setFaults({ errorCount: 50, paths: ['hazmat'] });
      const next = await fx.sync(t.db, ['shipment_modes', 'hazmat']);
      expect(next.outcomes.map((o) => [o.target.list.key, o.status]).sort()).toEqual([
        ['hazmat', 'failed'],
        ['shipment_modes', 'changed'],
      ]);
      expect(await footprint('start-fails')).toMatchObject({ runs: ['succeeded', 'partial'], snapshots: before.snapshots + 2, edited: 1 });
    } finally {
      sb.control.clearFaults();
      await fx.client.close();
    }
  });

  it("of a second source that fails: the first source's lists are not applied either, and its run is closed as abandoned by the next sync", async () => {
    const sb = await useSandbox();
    const first = sandboxSource(sb, { REFSYNC_ENVIRONMENT: 'start-first', REFSYNC_SOURCE_NAME: 'start-first' });
    const second = sandboxSource(sb, { REFSYNC_ENVIRONMENT: 'start-second', REFSYNC_SOURCE_NAME: 'start-second' });
    const fx = pipelineFixture(sb);
    try {
      expect((await sync(t.db, [first, second], fx.client, ['shipment_modes'])).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      sb.control.modifyEntry('shipment_modes', 'LTL', { description: 'Edited' });
      const refused = new Error('the second run row could not be written');
      const db = watchingStarts(t.db, async (source) => {
        if (source === 'start-second') throw refused;
      });
      await expect(sync(db, [first, second], fx.client, ['shipment_modes'])).rejects.toBe(refused);
      // The first source's run had started; none of its lists was applied in it.
      expect(await footprint('start-first')).toEqual({ runs: ['succeeded', 'running'], snapshots: 1, edited: 0 });
      expect(await footprint('start-second')).toEqual({ runs: ['succeeded'], snapshots: 1, edited: 0 });

      expect((await sync(t.db, [first, second], fx.client, ['shipment_modes'])).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      expect(await footprint('start-first')).toEqual({ runs: ['succeeded', 'failed', 'succeeded'], snapshots: 2, edited: 1 });
    } finally {
      await fx.client.close();
    }
  });
});
