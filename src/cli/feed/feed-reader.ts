import type { Queryable } from '../../db/database.ts';
import { connectionErrorText, isConnectionLost } from '../../db/connection-lost.ts';
import { readChangeFeed, type FeedRow } from '../../read/change-feed.ts';
import { exponentialDelay } from '../../util/backoff.ts';
import { storePosition } from './consumer-store.ts';
import type { LineOutput } from './line-output.ts';
import { Wakeup } from '../../util/wakeup.ts';

/**
 * Changes read per statement. A page is held in memory whole (with every change's before and after),
 * and a consumer's position is stored once a page is written: small enough for both, large enough
 * that a backlog is read in few round trips.
 */
const FEED_PAGE_SIZE = 1_000;

export interface FeedReaderOptions {
  db: Queryable;
  /** The position to read after; null reads from the start of history. */
  after: string | null;
  /** At most this many changes are printed; undefined: no bound. */
  limit: number | undefined;
  /** Keep reading as changes commit, until stopped; otherwise end at the feed's end. */
  follow: boolean;
  /** Whether a change is printed. One that is not is still read past: its position is passed (and stored). */
  accepts: (row: FeedRow) => boolean;
  format: (row: FeedRow) => string;
  output: LineOutput;
  /** Store the position under this name as lines are written (--consumer). */
  consumer: string | undefined;
  /** How long a follower sleeps between reads when nothing wakes it. */
  pollMs: number;
  /** One line for the person at the terminal (stderr): an outage, and the end of one. */
  say: (line: string) => void;
}

const describe = (position: string | null) => position ?? 'the start of history';

/**
 * Reads the change feed in pages from a position, printing each change once, in feed order. A
 * follower sleeps when it has read all there is, until a NOTIFY (wake), the poll interval, or a stop.
 * Losing the database while following is an outage, not an end: it says so once, tries again with
 * backoff, and resumes after the last position it printed, so nothing is lost or printed twice.
 */
export class FeedReader {
  readonly wakeup = new Wakeup();
  readonly #options: FeedReaderOptions;
  #position: string | null;
  #stored: string | null;
  #printed = 0;
  #stopping = false;
  #failures = 0;

  constructor(options: FeedReaderOptions) {
    this.#options = options;
    this.#position = options.after;
    this.#stored = options.after;
  }

  /** Where the run started: the position it read after (null: the start of history). */
  get start(): string | null {
    return this.#options.after;
  }

  /** The last position read past (printed or filtered out); null when none was. */
  get position(): string | null {
    return this.#position;
  }

  get printed(): number {
    return this.#printed;
  }

  /** Ends the run after the line in progress (SIGINT, SIGTERM). */
  stop(): void {
    this.#stopping = true;
    this.wakeup.wake();
  }

  async run(): Promise<void> {
    const { follow, pollMs } = this.#options;
    while (!this.#finished()) {
      try {
        const more = await this.#readPage();
        this.#reconnected();
        if (!more && !follow) break;
        if (!more) await this.wakeup.sleep(pollMs);
      } catch (err) {
        if (!follow || !isConnectionLost(err)) throw err;
        await this.#outage(err);
      }
    }
    await this.#store();
  }

  #finished(): boolean {
    const { limit, output } = this.#options;
    return this.#stopping || output.closed || (limit !== undefined && this.#printed >= limit);
  }

  /** Reads one page and prints what it accepts; whether a next page may follow at once. */
  async #readPage(): Promise<boolean> {
    const { db, limit, accepts, format, output } = this.#options;
    await this.#store();
    const size = limit === undefined ? FEED_PAGE_SIZE : Math.min(FEED_PAGE_SIZE, limit - this.#printed);
    const rows = await readChangeFeed(db, this.#position, size);
    for (const row of rows) {
      if (this.#finished()) break;
      if (accepts(row)) {
        await output.write(format(row));
        if (output.closed) break;
        this.#printed++;
      }
      this.#position = row.position;
    }
    await this.#store();
    return rows.length === size;
  }

  /** Stores the position once every line up to it is flushed (at least once: never before its line). */
  async #store(): Promise<void> {
    const { consumer, db, output } = this.#options;
    if (consumer === undefined || this.#position === null || this.#position === this.#stored) return;
    if (!(await output.flushed())) return;
    await storePosition(db, consumer, this.#position);
    this.#stored = this.#position;
  }

  async #outage(err: unknown): Promise<void> {
    this.#failures++;
    if (this.#failures === 1) {
      this.#options.say(`lost the database (${connectionErrorText(err)}); reconnecting, to resume after ${describe(this.#position)}`);
    }
    await this.wakeup.sleep(exponentialDelay(250, 10_000, this.#failures));
  }

  #reconnected(): void {
    if (this.#failures === 0) return;
    this.#failures = 0;
    this.#options.say(`reconnected; resuming after ${describe(this.#position)}`);
  }
}
