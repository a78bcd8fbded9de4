// A named consumer of the change feed: refdata.change_feed_consumers, one row per --consumer NAME,
// holding the position its reader last committed and the lease of the one process reading under the
// name (docs/change-feed.md, "Consumers"). The position moves only by a commit, only forwards.
import { ConfigError } from '../../config/errors.ts';
import type { Queryable } from '../../db/database.ts';
import { formatTime } from '../../read/format-time.ts';
import { claimConsumer, commitConsumerPosition, consumerRow, mayWriteConsumers } from '../../read/change-feed-sql.ts';
import { feedQuery } from '../../read/change-feed.ts';

export interface ConsumerRow {
  position: string;
  lease_token: string | null;
  lease_holder: string | null;
  lease_until: Date | null;
  lease_live: boolean | null;
}

/** The consumer's row, or null when the name was never used. */
export async function consumerState(q: Queryable, name: string): Promise<ConsumerRow | null> {
  const { rows } = await q.query<ConsumerRow>(consumerRow, [name]);
  return rows[0] ?? null;
}

/** A second process for a consumer name, or a commit refused: one line, exit 2. */
export class ConsumerRefused extends ConfigError {}

/** The line for a name whose lease another process holds. */
function heldLine(name: string, row: ConsumerRow | null): string {
  const until = row?.lease_until ? `, its lease runs until ${formatTime(row.lease_until)} unless renewed` : '';
  return `consumer '${name}' is being read by ${row?.lease_holder ?? 'another process'}${until}: one process at a time per name; wait for it to end, or use another name`;
}

/**
 * Takes the consumer's lease for this process and returns the position to read after: the stored one,
 * or `start` for a new name (the caller has checked it was given). Refused in one line while another
 * process holds a lease that has not lapsed.
 */
export async function claimLease(q: Queryable, name: string, start: string | null, token: string, holder: string, seconds: number): Promise<string> {
  const { rows } = await feedQuery(() => q.query<{ position: string }>(claimConsumer, [name, start, token, holder, seconds]));
  if (rows[0]) return rows[0].position;
  throw new ConsumerRefused(`changes: ${heldLine(name, await consumerState(q, name))}`);
}

/**
 * Commits `position` as processed for `name`: forwards only (the stored position equal is a no-op),
 * checked by the feed (22023: one it could not have returned), and with `token` only while this
 * process still holds the lease. Returns the stored position.
 */
export async function commitPosition(q: Queryable, name: string, position: string, token: string | null): Promise<string> {
  const { rows } = await feedQuery(() => q.query<{ position: string }>(commitConsumerPosition, [name, position, token]));
  if (rows[0]) return rows[0].position;
  const row = await consumerState(q, name);
  if (token !== null && row?.lease_token !== token) {
    throw new ConsumerRefused(`changes: lost the lease of consumer '${name}' (${heldLine(name, row)}); ${position} was not committed`);
  }
  throw new ConsumerRefused(
    `changes: consumer '${name}' has committed ${row?.position ?? '?'}, past ${position}: a consumer's position never moves back (read again under another name to replay)`,
  );
}

/**
 * Refuses, before anything is printed, a role that could read the feed but not keep a consumer
 * (refdata_reader is read-only): otherwise the first page would be printed and then the run fail.
 */
export async function assertCanStore(q: Queryable): Promise<void> {
  const { rows } = await q.query<{ ok: boolean; role: string }>(mayWriteConsumers);
  if (rows[0]?.ok) return;
  throw new ConfigError(
    `changes: --consumer stores positions in refdata.change_feed_consumers, and the role ${rows[0]?.role ?? '?'} may only read it; connect as refsync's own role, or grant it INSERT and UPDATE there`,
  );
}
