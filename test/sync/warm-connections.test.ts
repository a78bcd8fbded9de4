// A first sync opens the connections its lists will apply on while their fetches wait on the
// upstream (src/db/database.ts); a sync whose lists may all be unchanged opens none early.
import { describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import type { PageSource } from '../../src/sync/sync-target.ts';
import { createUpstreamClient } from '../../src/upstream/index.ts';
import { databaseWith, useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxSource } from '../helpers/source.ts';
import { waitFor } from '../queue/helpers.ts';

const t = useTestDatabase();
const APP = 'refsync-warm-test';
const LISTS = ['shipment_modes', 'hazmat', 'piece_types'] as const;

/** The client with every fetch held until open() is called. */
function gated(client: PageSource): { client: PageSource; open: () => void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return {
    client: {
      async *pages(request) {
        await gate;
        yield* client.pages(request);
      },
    },
    open,
  };
}

/** The database, counting the connections asked of its pool and telling when the lists' last ok snapshots were read. */
function watched(db: Database) {
  const seen = { connections: 0, lastOkRead: false };
  const wrapped = databaseWith(db, {
    query: async <R>(text: string, params?: unknown[]) => {
      const result = await db.query<R>(text, params);
      if (text.includes('refdata.target_last_ok')) seen.lastOkRead = true;
      return result;
    },
    withConnection: (fn) => {
      seen.connections++;
      return db.withConnection(fn);
    },
  });
  return { db: wrapped, seen };
}

const backends = async () =>
  (await t.db.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = $1', [APP]))
    .rows[0]!.n;

describe('connections of a sync', () => {
  it('a first sync opens the connections its lists will be written on (two for three lists) while the fetches wait; the next, whose lists may be unchanged, opens none early', async () => {
    const sb = await useSandbox();
    const source = sandboxSource(sb, { REFSYNC_ENVIRONMENT: 'warm-env', REFSYNC_LISTS: LISTS.join(',') });
    const upstream = createUpstreamClient(source);
    /** One sync on a fresh pool; `early` runs once its run has started, before anything is fetched. */
    const sync = async (early: (seen: { connections: number }) => Promise<void>) => {
      const { db, seen } = watched(await openDatabase({ url: t.url, poolSize: 8, applicationName: APP }));
      const held = gated(upstream);
      try {
        const running = runSync({ db, sources: [source], clientFor: () => held.client, trigger: 'cli', concurrency: 4 });
        await waitFor(() => seen.lastOkRead, "the lists' last ok snapshots to be read");
        await new Promise((resolve) => setImmediate(resolve));
        await early(seen);
        held.open();
        const [result] = await running;
        return result!.outcomes.map((o) => o.status);
      } finally {
        held.open();
        await db.close();
      }
    };
    try {
      // Nothing fetched yet: the run's own connection, and one for each transaction its three lists
      // will be written in (two at once at most, run-sync.ts).
      const first = await sync(async (seen) => {
        expect(seen.connections).toBe(1 + 2);
        expect(await waitFor(async () => (await backends()) >= 1 + 2 && (await backends()), 'the connections to be open')).toBe(1 + 2);
        expect((await t.db.query('select 1 from refdata.snapshots')).rows).toEqual([]);
      });
      expect(first).toEqual(['changed', 'changed', 'changed']);
      // Every list has an ok snapshot: only the run's connection until a list is fetched.
      const next = await sync(async (seen) => {
        expect(seen.connections).toBe(1);
      });
      expect(next).toEqual(['unchanged', 'unchanged', 'unchanged']);
    } finally {
      await upstream.close();
    }
  });
});
