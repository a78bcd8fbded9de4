// One process at a time per consumer name (docs/change-feed.md, "Consumers"). A lease row, not an
// advisory lock: a session lock is not held across statements behind a transaction-mode pooler, and a
// transaction-scoped one needs a transaction open for the whole run, which idle-in-transaction timeouts
// end and which, once it commits a position, has a transaction id that holds the feed back for every
// reader. The lease is a token and an expiry in the consumer's row, renewed while this process runs:
// a process killed outright frees the name once its lease lapses, and no transaction stays open.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Queryable } from '../../db/database.ts';
import { releaseConsumerLease, renewConsumerLease } from '../../read/change-feed-sql.ts';
import { claimLease, commitPosition } from './consumer-store.ts';

/** How long a lease lasts unless renewed; it is renewed every third of that. */
export const LEASE_SECONDS = 30;

export class ConsumerLease {
  readonly name: string;
  readonly token = randomUUID();
  readonly #q: Queryable;
  #timer: NodeJS.Timeout | undefined;
  #lost: Error | undefined;

  private constructor(q: Queryable, name: string) {
    this.#q = q;
    this.name = name;
  }

  /** Takes the lease (refused in one line while another holds it); returns it and the position to read after. */
  static async take(q: Queryable, name: string, start: string | null): Promise<{ lease: ConsumerLease; position: string }> {
    const lease = new ConsumerLease(q, name);
    const position = await claimLease(q, name, start, lease.token, `${hostname()} pid ${process.pid}`, LEASE_SECONDS);
    lease.#renewEvery((LEASE_SECONDS * 1000) / 3);
    return { lease, position };
  }

  /** Set once a renewal found the lease gone (this process stalled past it, and another took the name). */
  get lost(): Error | undefined {
    return this.#lost;
  }

  #renewEvery(ms: number): void {
    this.#timer = setInterval(() => {
      this.#q
        .query(renewConsumerLease, [this.name, this.token, LEASE_SECONDS])
        .then(({ rows }) => {
          if (rows.length === 0) this.#lost ??= new Error(`changes: lost the lease of consumer '${this.name}' to another process`);
        })
        // A renewal that fails (the database away for a moment) is tried again at the next tick.
        .catch(() => undefined);
    }, ms);
    this.#timer.unref();
  }

  /** Commits a position as this lease's holder: refused when the lease was lost. */
  commit(position: string): Promise<string> {
    return commitPosition(this.#q, this.name, position, this.token);
  }

  /** Stops renewing and gives the name back. */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    await this.#q.query(releaseConsumerLease, [this.name, this.token]).catch(() => undefined);
  }
}
