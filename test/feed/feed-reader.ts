// A downstream job reading refdata.change_feed as the docs tell it to: keep the position of the last
// row processed, pass it back. What it read is kept in order, for the tests to check exactly once.
import type { Queryable } from '../../src/db/database.ts';

export interface FedChange {
  position: string;
  id: number;
}

export class FeedReader {
  readonly read: FedChange[] = [];
  readonly #db: Queryable;
  readonly #pageSize: number;
  #after: string | null = null;

  constructor(db: Queryable, pageSize: number) {
    this.#db = db;
    this.#pageSize = pageSize;
  }

  /** One call of the feed after the last position read: how many rows it returned. */
  async poll(): Promise<number> {
    const { rows } = await this.#db.query<{ position: string; id: string | number }>('select position, id from refdata.change_feed($1, $2)', [
      this.#after,
      this.#pageSize,
    ]);
    for (const r of rows) this.read.push({ position: r.position, id: Number(r.id) });
    if (rows.length > 0) this.#after = rows.at(-1)!.position;
    return rows.length;
  }

  /** Polls until a call returns nothing: everything the feed can serve now has been read. */
  async drain(): Promise<void> {
    while ((await this.poll()) > 0);
  }

  /**
   * Polls until `count` changes have been read in all. The feed's fence is the oldest open write
   * transaction of the whole cluster: other test files' syncs may hold it a moment after ours commit.
   */
  async readUntil(count: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.read.length < count) {
      if ((await this.poll()) > 0) continue;
      if (Date.now() > deadline) throw new Error(`the feed served ${this.read.length} of ${count} changes in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await this.drain();
  }
}

/** The ids of every change recorded, in id order. */
export async function recordedIds(db: Queryable): Promise<number[]> {
  const { rows } = await db.query<{ id: string | number }>('select id from refdata.entry_changes order by id');
  return rows.map((r) => Number(r.id));
}

/** What a reader read, checked: positions strictly increasing; returns its ids sorted. */
export function idsInReadOrder(reader: FeedReader): { increasing: boolean; ids: number[] } {
  const increasing = reader.read.every((r, i) => i === 0 || reader.read[i - 1]!.position < r.position);
  return { increasing, ids: reader.read.map((r) => r.id).sort((a, b) => a - b) };
}

/**
 * Waits (bounded) until the feed serves every change recorded: other test files' open write
 * transactions hold the cluster-wide fence for a moment after this file's syncs commit.
 */
export async function feedCaughtUp(db: Queryable, timeoutMs = 60_000): Promise<void> {
  const reader = new FeedReader(db, 100_000);
  await reader.readUntil((await recordedIds(db)).length, timeoutMs);
}
