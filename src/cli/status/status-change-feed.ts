// The change feed's part of `refsync status`: `change_feed` in --json (held_seconds 0 when no write
// transaction is open, and who holds it when one is), and a line when it has been held past
// HOLDBACK_NOTICE_SECONDS. An unreadable answer says so in its place rather than failing the status.
import type { Queryable } from '../../db/database.ts';
import { readFeedHoldback, holdbackWorthNoting, holdbackNotice, type FeedHoldback } from '../../read/change-feed-holdback.ts';
import { terminalText } from '../output/terminal.ts';

export interface ChangeFeedStatus {
  change_feed: FeedHoldback | { error: string };
  lines: string[];
}

export async function changeFeedStatus(db: Queryable): Promise<ChangeFeedStatus> {
  try {
    const held = await readFeedHoldback(db);
    return { change_feed: held, lines: holdbackWorthNoting(held) ? [terminalText(holdbackNotice(held))] : [] };
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? 'unreadable';
    return { change_feed: { error: message }, lines: [`change feed: whether it is held back is unknown (${terminalText(message)})`] };
  }
}
