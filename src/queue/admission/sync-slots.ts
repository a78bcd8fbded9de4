/**
 * The lists a worker syncs at once, in all (REFSYNC_CONCURRENCY of them): a target job's list and
 * each list a run job syncs itself. BullMQ bounds a worker's jobs, and a run job may sync several of
 * its source's lists, so without this a worker would have up to twice its concurrency of requests in
 * flight and of syncs asking its pool (REFSYNC_CONCURRENCY + 4 connections) for a connection.
 */
export class SyncSlots {
  /** The slots in all (REFSYNC_CONCURRENCY). */
  readonly size: number;
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.size = Math.max(1, size);
    this.#free = this.size;
  }

  /** Waits for a slot; the function returned gives it back (once). */
  async take(): Promise<() => void> {
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      // Handed straight to the next waiter, so a slot freed is never taken twice.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    };
  }
}
