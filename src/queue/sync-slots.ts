/**
 * The lists a worker's run jobs sync themselves at once, in all (REFSYNC_CONCURRENCY of them):
 * BullMQ bounds a worker's jobs, and a run job may sync several of its source's lists, so without
 * this a worker busy with run jobs would have many times its concurrency of requests in flight.
 */
export class SyncSlots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#free = Math.max(1, size);
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
