// Connections opened while the network is the wait, not when the first apply needs one.
import type { Database } from './database.ts';

/**
 * Asks the pool for `count` connections at once and gives each back once `warm` (a statement) ran
 * on it: those it had to open stay idle in it for the applies to come. A first sync's lists all
 * reach their applies together, a latency after they were asked for; a new backend's start (fork,
 * authentication, its first catalog reads) then ran in their way on the same cores. `warm` reads
 * the catalog the applies' first statements would (a new session's first statement on a table loads
 * the table and its indexes: 3 ms for refdata.entries). Failures are dropped here: an apply that
 * cannot get a connection reports it. PGlite has no connections to open.
 */
export function warmConnections(db: Database, count: number, warm?: string): void {
  if (db.kind !== 'pg') return;
  for (let i = 0; i < count; i++)
    void db
      .withConnection(async (conn) => {
        if (warm) await conn.query(warm);
      })
      .catch(() => undefined);
}
