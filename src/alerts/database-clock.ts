import type { Database } from '../db/database.ts';

/** How often the offset to the database's clock is measured again. */
const REMEASURE_MS = 600_000;

/**
 * The time on the database's clock. Schedules (next_attempt_at, leases) are compared with times
 * the database wrote, so the dispatcher runs on its clock: a worker whose clock is off still
 * delivers on time. The offset is measured at the first drain and every ten minutes after.
 */
export class DatabaseClock {
  readonly #db: Database;
  readonly #localNow: () => number;
  #offsetMs: number | undefined;
  #measuredAt = 0;

  constructor(db: Database, localNow: () => number) {
    this.#db = db;
    this.#localNow = localNow;
  }

  /** Measures the offset when it never was, or not for ten minutes. */
  async measure(): Promise<void> {
    if (this.#offsetMs !== undefined && performance.now() - this.#measuredAt < REMEASURE_MS) return;
    const { rows } = await this.#db.query<{ ms: number }>('select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms');
    this.#offsetMs = Number(rows[0]!.ms) - this.#localNow();
    this.#measuredAt = performance.now();
  }

  /** Milliseconds since the epoch on the database's clock (the local clock until measured). */
  now(): number {
    return this.#localNow() + (this.#offsetMs ?? 0);
  }

  date(): Date {
    return new Date(this.now());
  }
}
