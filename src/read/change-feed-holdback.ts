// How long the change feed is held back, and by whom (refdata.change_feed_held(), migration 0015):
// the feed serves no change newer than the oldest open write transaction in the database cluster,
// so one idle transaction anywhere stalls every downstream job. Read by `refsync status`, the
// status page and the worker's refsync_change_feed_held_seconds; what to do is docs/production.md,
// "A held change feed".
import type { Queryable } from '../db/database.ts';
import { formatTime } from './format-time.ts';
import { feedHoldbackBy } from './change-feed-sql.ts';

/** A held feed is worth a line for people only past this: a sync's own apply holds it for seconds. */
export const HOLDBACK_NOTICE_SECONDS = 60;

export interface FeedHoldback {
  /**
   * Age of the transaction holding the feed back; 0 when no write transaction is open; null when one
   * is but the owner of refdata may not see when it began (refsync's role without pg_read_all_stats).
   */
  held_seconds: number | null;
  /** The holding session, when Postgres shows it to this role; null for a prepared transaction. */
  pid: number | null;
  application_name: string | null;
  /** `idle in transaction`, `active`, ... or `prepared`. */
  state: string | null;
  /** When the holding transaction began. */
  since: Date | null;
}

export async function readFeedHoldback(q: Queryable): Promise<FeedHoldback> {
  const { rows } = await q.query<FeedHoldback>(feedHoldbackBy);
  return rows[0]!;
}

/** `42 s`, `17 min`, `3 h`: whole units, rounded down, so a hold never reads shorter than it is. */
export function formatHoldbackFor(seconds: number): string {
  const s = Math.floor(seconds);
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 3600)} h`;
}

/**
 * Who holds the feed, as far as Postgres says: `pid 4242 (psql, idle in transaction, since ...)`, or
 * for a prepared transaction (no session) `prepared transaction GID (since ...)`.
 */
export function holdbackOwner(held: FeedHoldback): string {
  const since = held.since ? `since ${formatTime(held.since)}` : null;
  if (held.pid === null) return `${held.application_name ?? 'a prepared transaction'}${since ? ` (${since})` : ''}`;
  const details = [held.application_name || null, held.state, since].filter(Boolean);
  return `pid ${held.pid}${details.length ? ` (${details.join(', ')})` : ''}`;
}

/**
 * The line people read when the feed has been held long: how long, by whom, and what ends it. A
 * prepared transaction is settled by its transaction manager (or COMMIT/ROLLBACK PREPARED), not killed.
 */
export function holdbackNotice(held: FeedHoldback & { held_seconds: number }): string {
  const end =
    held.pid === null
      ? 'settle it (COMMIT PREPARED or ROLLBACK PREPARED, as its transaction manager would)'
      : `have its client commit or roll back, or end the session with select pg_terminate_backend(${held.pid})`;
  return (
    `change feed held back for ${formatHoldbackFor(held.held_seconds)} by ${holdbackOwner(held)}: downstream jobs get no newer change until it ends; ` +
    `${end}. See docs/production.md, "A held change feed".`
  );
}

/** Whether the hold deserves a line in `refsync status` and on the status page. */
export const holdbackWorthNoting = (held: FeedHoldback | null): held is FeedHoldback & { held_seconds: number } =>
  held !== null && held.held_seconds !== null && held.held_seconds > HOLDBACK_NOTICE_SECONDS;
