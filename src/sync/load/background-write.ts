/**
 * One write at a time running behind the caller: a spill is written while the next pages are
 * fetched. Starting or waiting (written) waits for the write before and throws its failure, so nothing
 * reads a table a failed write left partial.
 */
export class BackgroundWrite {
  #inflight: Promise<void> | undefined;
  #failure: unknown;

  /** Waits for the write in flight; throws the failure of any earlier write. */
  async written(): Promise<void> {
    if (this.#inflight) {
      await this.#inflight;
      this.#inflight = undefined;
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Lets `write` run on; its failure is kept for the next written(). Call after written(). */
  start(write: Promise<void>): void {
    this.#inflight = write.catch((err: unknown) => {
      this.#failure = err;
    });
  }

  /** Waits for the write in flight without throwing: before a table is dropped or a transaction ended. */
  async idle(): Promise<void> {
    await this.#inflight;
  }
}
