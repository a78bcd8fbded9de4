import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';

/**
 * What a process (a worker, the demo) has opened, in order. closeAll() closes it backwards, so nothing is closed
 * while something opened after it (and maybe using it) is still open; a failing close is logged and
 * the rest still close, then the first error is thrown.
 */
export class ResourceStack {
  readonly #logger: Logger;
  readonly #opened: Array<{ name: string; close: () => Promise<unknown> }> = [];

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  push(name: string, close: () => Promise<unknown>): void {
    this.#opened.push({ name, close });
  }

  async closeAll(): Promise<void> {
    let first: unknown;
    for (const { name, close } of this.#opened.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        this.#logger.warn({ resource: name, err: errorLine(err) }, 'close failed');
        first ??= err;
      }
    }
    if (first) throw first;
  }
}
