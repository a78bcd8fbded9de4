/**
 * What a loop sleeps on between rounds (the change feed's follower between reads, the alert
 * dispatcher between drains): a timeout (the poll), a NOTIFY, or a stop. A wake-up that comes while
 * the loop is working is kept, so the next sleep returns at once: a change committed during a round
 * is never left waiting for the next poll.
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
