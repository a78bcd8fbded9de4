// Where a named consumer of the change feed has got to: refdata.change_feed_consumers, one row per
// --consumer NAME, holding the position of the last change it wrote out.
import { ConfigError } from '../../config/errors.ts';
import type { Queryable } from '../../db/database.ts';
import { consumerPosition, saveConsumerPosition, mayWriteConsumers } from '../../read/change-feed-sql.ts';

/** The position stored under `name`, or null when the consumer has none yet (it reads from the start). */
export async function storedPosition(q: Queryable, name: string): Promise<string | null> {
  const { rows } = await q.query<{ position: string }>(consumerPosition, [name]);
  return rows[0]?.position ?? null;
}

/** Stores `position` under `name`: called only once every line up to it has been written out. */
export async function storePosition(q: Queryable, name: string, position: string): Promise<void> {
  await q.query(saveConsumerPosition, [name, position]);
}

/**
 * Refuses, before anything is printed, a role that could read the feed but not store positions
 * (refdata_reader is read-only): otherwise the first page would be printed and then the run fail.
 */
export async function assertCanStore(q: Queryable): Promise<void> {
  const { rows } = await q.query<{ ok: boolean; role: string }>(mayWriteConsumers);
  if (rows[0]?.ok) return;
  throw new ConfigError(
    `changes: --consumer stores positions in refdata.change_feed_consumers, and the role ${rows[0]?.role ?? '?'} may only read it; connect as refsync's own role, or grant it INSERT and UPDATE there`,
  );
}
