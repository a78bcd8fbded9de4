import type { Writable } from 'node:stream';

/**
 * Lines to stdout. Writes wait for the stream to drain (so a slow reader slows the feed, not memory),
 * and a reader that went away (`| head -1`: EPIPE) closes the output quietly instead of ending the
 * process with a stack trace. A line written is not a line processed: nothing is committed here
 * (docs/change-feed.md, "Consumers").
 */
export class LineOutput {
  readonly #stream: Writable;
  #closed = false;

  constructor(stream: Writable) {
    this.#stream = stream;
    // Without a listener an EPIPE would be thrown as an unhandled 'error' event.
    stream.on('error', () => {
      this.#closed = true;
    });
  }

  /** The reader has gone (or the stream failed): nothing more can be written. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Writes one line; resolves once the stream can take more. */
  async write(line: string): Promise<void> {
    if (this.#closed) return;
    const more = this.#stream.write(`${line}\n`, (err) => {
      if (err) this.#closed = true;
    });
    if (!more && !this.#closed) await this.#drained();
  }

  /** Resolves when the stream drains, or closes or fails (then `closed` says so). */
  #drained(): Promise<void> {
    const stream = this.#stream;
    return new Promise<void>((resolve) => {
      const events = ['drain', 'close', 'error'] as const;
      const done = () => {
        for (const event of events) stream.off(event, done);
        resolve();
      };
      for (const event of events) stream.on(event, done);
    });
  }
}
