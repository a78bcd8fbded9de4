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
}

/** A position the feed would not take (SQLSTATE 22023 from refdata.change_feed_after): its one-line message. */
export class FeedPositionError extends Error {}

/**
 * The next `limit` changes after position `after` (null: from the start of history), in feed order.
 * The one place the feed is read: refdata.change_feed holds back what an open write transaction could
 * still precede, so repeating the call with the last position returned reads every change once.
 */
export async function readChangeFeed(q: Queryable, after: string | null, limit: number): Promise<FeedRow[]> {
  try {
    const { rows } = await q.query<FeedRow>(changeFeedPage, [after, limit]);
    return rows;
  } catch (err) {
    if ((err as { code?: unknown }).code === '22023') throw new FeedPositionError((err as Error).message);
    throw err;
  }
}

/**
 * The position of the last change the feed serves now (null: none yet), for a reader that starts at
 * the end (`refsync changes --follow`). Every change served later comes after it: it is written by a
 * transaction still open now or begun later, whose txid is at or above the fence.
 */
export async function changeFeedEnd(q: Queryable): Promise<string | null> {
  const { rows } = await q.query<{ position: string }>(feedEndPosition);
  return rows[0]?.position ?? null;
}
