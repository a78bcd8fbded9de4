import type { Queryable } from '../../db/database.ts';
import { connectionErrorText, isConnectionLost } from '../../db/connection-lost.ts';
import { readChangeFeed, type FeedRow } from '../../read/change-feed.ts';
import { exponentialDelay } from '../../util/backoff.ts';
import type { LineOutput } from './line-output.ts';
import { Wakeup } from '../../util/wakeup.ts';

/**
 * Changes read per statement. A page is held in memory whole (with every change's before and after):
 * small enough for that, large enough that a backlog is read in few round trips.
 */
export const FEED_PAGE_SIZE = 1_000;

/**
 * Where a page's lines go in `--exec` mode: the batch (the lines the filters accept, possibly none)
 * and the last position read, which `deliver` commits once the lines are processed; it throws when
 * they were not.
 */
export interface BatchSink {
  deliver(lines: string[], lastPosition: string): Promise<void>;
}

export interface FeedReaderOptions {
  db: Queryable;
  /** The position to read after; null reads from the start of history. */
  after: string | null;
  /** At most this many changes are printed; undefined: no bound. */
  limit: number | undefined;
  /** Keep reading as changes commit, until stopped; otherwise end at the feed's end. */
  follow: boolean;
  /** Whether a change is printed. One that is not is still read past: its position is passed. */
  accepts: (row: FeedRow) => boolean;
  format: (row: FeedRow) => string;
  /** Lines printed one by one (nothing stored: a reader commits what it processed), or... */
  output: LineOutput;
  /** ...each page handed over as one batch (--exec), this many changes at most. */
  batch?: { sink: BatchSink; size: number };
  /** Checked between pages: set when the run must end in error (a consumer's lease lost). */
  failure?: () => Error | undefined;
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
 * backoff, and resumes after the last position it printed, so nothing is lost or printed twice. It
 * stores nothing itself: a consumer's position moves when its reader commits (consumer-store.ts).
 */
export class FeedReader {
  readonly wakeup = new Wakeup();
  readonly #options: FeedReaderOptions;
  #position: string | null;
  #printed = 0;
  #stopping = false;
  #failures = 0;

  constructor(options: FeedReaderOptions) {
    this.#options = options;
    this.#position = options.after;
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
      const failure = this.#options.failure?.();
      if (failure) throw failure;
    }
  }

  #finished(): boolean {
    const { limit, output } = this.#options;
    return this.#stopping || output.closed || (limit !== undefined && this.#printed >= limit);
  }

  /** Reads one page and prints (or hands over) what it accepts; whether a next page may follow at once. */
  async #readPage(): Promise<boolean> {
    const { db, limit, accepts, format, output, batch } = this.#options;
    const page = batch?.size ?? FEED_PAGE_SIZE;
    const size = limit === undefined ? page : Math.min(page, limit - this.#printed);
    const rows = await readChangeFeed(db, this.#position, size);
    if (batch) {
      const accepted = rows.filter(accepts);
      if (rows.length > 0) await batch.sink.deliver(accepted.map(format), rows.at(-1)!.position);
      this.#printed += accepted.length;
      if (rows.length > 0) this.#position = rows.at(-1)!.position;
      return rows.length === size;
    }
    for (const row of rows) {
      if (this.#finished()) break;
      if (accepts(row)) {
        await output.write(format(row));
        if (output.closed) break;
        this.#printed++;
      }
      this.#position = row.position;
    }
    return rows.length === size;
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
