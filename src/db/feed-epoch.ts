// A restored database, noticed before anything is written after it (docs/architecture.md, "The change
// feed", epochs): refdata.change_feed_follow_restore() compares the cluster's identity and timeline
// and this server's transaction ids with those the feed's current epoch began on, and starts a new
// epoch when the database was restored. Called by `refsync migrate`, before `refsync sync` writes, and
// with a worker's schema check before each run job (the same round trip).
import type { Queryable } from './database.ts';
import { followRestoreSql } from './feed-epoch-sql.ts';

/** Records a restore of the database as a new feed epoch if there was one; the current epoch. */
export async function followRestore(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ epoch: number }>(followRestoreSql);
  return rows[0]!.epoch;
}
