import type { Writable } from 'node:stream';

/**
 * Lines to stdout for a reader that stores where it has got to: a position may be stored only once
 * its line, and every line before it, has been handed to the operating system. Writes wait for the
 * stream to drain (so a slow reader slows the feed, not memory), and a reader that went away
 * (`| head -1`: EPIPE) closes the output quietly instead of ending the process with a stack trace.
 */
export class LineOutput {
  readonly #stream: Writable;
  #closed = false;
  #lastWrite: Promise<void> = Promise.resolve();

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
    let done: () => void = () => undefined;
    this.#lastWrite = new Promise<void>((resolve) => (done = resolve));
    const more = this.#stream.write(`${line}\n`, (err) => {
      if (err) this.#closed = true;
      done();
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

  /** Whether every line written so far has been flushed (false: the reader went away meanwhile). */
  async flushed(): Promise<boolean> {
    await this.#lastWrite;
    return !this.#closed;
  }
}
