import type { Queryable } from '../db/database.ts';
import { changeFeedPage, feedEndPosition } from './change-feed-sql.ts';

/** One row of refdata.change_feed: an entry change and its feed position (docs/change-feed.md). */
export interface FeedRow {
  /** Sorts as text in feed order; pass the last one processed back as `after`. */
  position: string;
  id: number;
  snapshot_id: number;
  environment: string;
  list_key: string;
  variant: string;
  entry_key: string;
  code: string | null;
  change: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  changed_fields: string[] | null;
  detected_at: Date;
  impact: unknown;
  /** The writing transaction's id (xid8), as text: it may pass 2^53. */
  txid: string;
  /** The feed epoch the change was written in: 0 until the database is first restored. */
  feed_epoch: number;
}

/** A position the feed would not take (SQLSTATE 22023 from refdata.change_feed_check): its one-line message. */
export class FeedPositionError extends Error {}

/** A restore refsync has not recorded yet (SQLSTATE 55000 from refdata.change_feed_check): its one-line message. */
export class FeedRestoredError extends Error {}

/** The feed's own refusals (refdata.change_feed_check, wherever a statement calls it) as their errors; anything else as it came. */
export async function feedQuery<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === '22023') throw new FeedPositionError((err as Error).message);
    if (code === '55000' && /change feed/.test((err as Error).message)) throw new FeedRestoredError((err as Error).message);
    throw err;
  }
}

/**
 * The next `limit` changes after position `after` (null: from the start of history), in feed order.
 * The one place the feed is read: refdata.change_feed holds back what an open write transaction could
 * still precede, so repeating the call with the last position returned reads every change once.
 */
export async function readChangeFeed(q: Queryable, after: string | null, limit: number): Promise<FeedRow[]> {
  const { rows } = await feedQuery(() => q.query<FeedRow>(changeFeedPage, [after, limit]));
  return rows;
}

/**
 * The position of the last change the feed serves now (null: none yet), for a reader that starts at
 * the end (`refsync changes --follow`). Every change served later comes after it: it is written by a
 * transaction still open now or begun later, whose txid is at or above the fence.
 */
export async function changeFeedEnd(q: Queryable): Promise<string | null> {
  const { rows } = await feedQuery(() => q.query<{ position: string | null }>(feedEndPosition));
  return rows[0]?.position ?? null;
}
