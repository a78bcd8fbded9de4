// A restored database, noticed before anything is written after it (docs/architecture.md, "The change
// feed", epochs): refdata.change_feed_follow_restore() compares the cluster's identity and timeline
// and this server's transaction ids with those the feed's current epoch began on, and starts a new
// epoch when the database was restored. Called by `refsync migrate`, before `refsync sync` writes, and
// with a worker's schema check before each run job (the same round trip).
import type { Queryable } from './database.ts';

/** Records a restore as a new feed epoch if there was one; the current epoch. */
export const followRestoreSql = 'select refdata.change_feed_follow_restore() as epoch';

/** The worker's schema check and the restore check in one statement (the function runs once, in FROM). */
export const appliedMigrationsFollowingRestore = 'select m.created_at from refdata.change_feed_follow_restore() as e, drizzle.__drizzle_migrations m';

export async function followRestore(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ epoch: number }>(followRestoreSql);
  return rows[0]!.epoch;
}
