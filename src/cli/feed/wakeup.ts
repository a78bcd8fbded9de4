/**
 * What a following reader sleeps on between reads: a timeout (the poll), a NOTIFY, or a stop. A
 * wake-up that comes while the reader is reading is kept, so the next sleep returns at once: a
 * change committed during a read is never left waiting for the next poll.
 */
export class Wakeup {
  #pending = false;
  #wake: (() => void) | undefined;

  /** Wakes the sleeper now, or the next one to sleep. */
  wake(): void {
    this.#pending = true;
    this.#wake?.();
  }

  /** Resolves after `ms`, or at the first wake-up (one already pending returns at once). */
  sleep(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      this.#wake = undefined;
      this.#pending = false;
    });
  }
}
