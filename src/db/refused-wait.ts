// The pool's bounded wait for a connection the server refuses. A managed Postgres shared with other
// applications runs out of slots for moments (another job's burst, a deploy's overlap): asking
// again a little later keeps a list from failing for a slot that frees a second after.
import type pg from 'pg';
import { exponentialDelay } from '../util/backoff.ts';
import { DatabaseRefusedError, isConnectionRefusal } from './refused.ts';

/**
 * A client of the pool; a refused connection (refused.ts) is asked for again, with backoff, until
 * `waitMs` has passed, then DatabaseRefusedError. Other connect errors are thrown at once, as before.
 */
export async function connectWithin(pool: pg.Pool, waitMs: number): Promise<pg.PoolClient> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await pool.connect();
    } catch (err) {
      if (!isConnectionRefusal(err)) throw err;
      const waited = Date.now() - started;
      if (waited >= waitMs) throw new DatabaseRefusedError(err, waited);
      await new Promise((resolve) => setTimeout(resolve, Math.min(exponentialDelay(100, 2000, attempt + 1), waitMs - waited)));
    }
  }
}
