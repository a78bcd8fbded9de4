import type { Duplex } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { CopyStalledError, copyIn } from '../../src/db/copy-in.ts';
import { openDatabase, type Queryable } from '../../src/db/database.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { captureLogs } from '../helpers/logs.ts';

/** Rows `id<TAB>label` in COPY text format, `perChunk` lines to a chunk. */
function* rows(count: number, perChunk: number, label: (id: number) => string): Generator<string> {
  for (let first = 0; first < count; first += perChunk) {
    let chunk = '';
    for (let id = first; id < Math.min(first + perChunk, count); id++) chunk += `${id}\t${label(id)}\n`;
    yield chunk;
  }
}

/** About 20 MB in 256 KB chunks: far more than the socket buffers between us and Postgres hold. */
const twentyMegabytes = () => rows(20_000, 250, () => 'x'.repeat(1_024));

describe('copyIn', () => {
  const t = useTestDatabase();

  it('lands every row', async () => {
    await t.db.query('create table copy_in_rows (id int primary key, label text not null)');
    await t.db.withConnection((conn) =>
      copyIn(
        conn,
        'copy copy_in_rows (id, label) from stdin',
        rows(5_000, 400, (id) => `row ${id} `.padEnd(100, '.')),
      ),
    );
    const { rows: found } = await t.db.query<{ n: number; label: string }>(
      'select (select count(*)::int from copy_in_rows) as n, label from copy_in_rows where id = 4321',
    );
    expect(found).toEqual([{ n: 5_000, label: 'row 4321 '.padEnd(100, '.') }]);
  });

  /**
   * Creates `table` and lets `run` start a COPY into it that Postgres never takes data for, on a
   * pool of its own; then checks what the deadline leaves behind: the COPY failed with
   * CopyStalledError, the dead session left the pool, its backend ended and no row landed.
   */
  async function expectStallCleanedUp(table: string, run: (conn: Queryable, copy: (q: Queryable) => Promise<unknown>) => Promise<unknown>): Promise<void> {
    await t.db.query(`create table ${table} (id int, filler text)`);
    const logs = captureLogs();
    const db = await openDatabase({ url: t.url, poolSize: 2, logger: logs.logger });
    try {
      const copy = (q: Queryable) => copyIn(q, `copy ${table} (id, filler) from stdin`, twentyMegabytes(), { stallMs: 500 }).catch((err: unknown) => err);
      const failure = await db.withConnection((conn) => run(conn, copy));
      expect(failure).toBeInstanceOf(CopyStalledError);
      expect((failure as Error).message).toContain(`COPY into ${table} made no progress`);

      // withConnection saw the client fail and dropped it: two queries at once use every pooled
      // client, and would meet the dead one had it gone back to the pool.
      expect(logs.text()).toContain('Postgres connection lost while in use');
      await Promise.all([db.query('select pg_sleep(0.05)'), db.query('select pg_sleep(0.05)')]);

      await vi.waitFor(
        async () => {
          const { rows: backends } = await t.db.query<{ n: number }>(
            "select count(*)::int as n from pg_stat_activity where datname = current_database() and query like 'copy ' || $1 || ' %'",
            [table],
          );
          expect(backends[0]?.n).toBe(0);
        },
        { timeout: 5_000, interval: 50 },
      );
      const { rows: landed } = await t.db.query<{ n: number }>(`select count(*)::int as n from ${table}`);
      expect(landed[0]?.n).toBe(0);
    } finally {
      await db.close();
    }
  }

  it('fails a COPY that waits on a lock; once the lock is gone its backend ends', async () => {
    await expectStallCleanedUp('copy_in_locked', async (conn, copy) => {
      // Postgres takes the table's lock before it asks for data, so no chunk is ever accepted.
      let unlock!: () => void;
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = t.db.transaction(async (tx) => {
        await tx.query('lock table copy_in_locked in access exclusive mode');
        locked();
        await new Promise<void>((resolve) => (unlock = resolve));
      });
      await isLocked;
      try {
        return await copy(conn);
      } finally {
        // The backend notices the closed socket only once it has the lock and talks to us again.
        unlock();
        await holder;
      }
    });
  });

  it('fails a COPY whose data stops reaching Postgres (the hang as seen: Postgres in ClientRead)', async () => {
    await expectStallCleanedUp('copy_in_unsent', (conn, copy) => {
      // The socket is corked once the COPY is sent: Postgres waits for data that this process holds
      // back while it waits for the socket to drain, the state of the hang this deadline is for.
      const corking: Queryable = {
        async query<R>(text: string, params?: unknown[]) {
          const result = await conn.query<R>(text, params);
          (text as unknown as { connection: { stream: Duplex } }).connection.stream.cork();
          return result;
        },
        script: (statements) => conn.script(statements),
      };
      return copy(corking);
    });
  });
});
