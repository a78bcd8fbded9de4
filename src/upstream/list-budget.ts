import type { BodyContext } from './body.ts';
import { SizeError } from './errors.ts';

/** What one streamed list may take (REFSYNC_MAX_ENTRY_BYTES, REFSYNC_MAX_LIST_ENTRIES, REFSYNC_MAX_LIST_BYTES). */
export interface ListLimits {
  maxEntryBytes: number;
  maxListEntries: number;
  maxListBytes: number;
}

/**
 * The limits of one list as its pages arrive. A streamed list is never held whole, so the size of
 * one answer is no guard: what a hostile or broken upstream could still cost is one entry held
 * (bytes per entry), the rows stored (entries per list) and the time and traffic of reading
 * (bytes per list, every answer of the list counted, a retried one again).
 */
export class ListBudget {
  readonly limits: ListLimits;
  #bytes = 0;
  #entries = 0;

  constructor(limits: ListLimits) {
    this.limits = limits;
  }

  /** A body is about to be read; its Content-Length, when stated, is refused at once if it cannot fit. */
  declared(length: number | undefined, ctx: BodyContext): void {
    if (length !== undefined && this.#bytes + length > this.limits.maxListBytes) throw this.#tooManyBytes(ctx, ` (Content-Length ${length})`);
  }

  received(bytes: number, ctx: BodyContext): void {
    this.#bytes += bytes;
    if (this.#bytes > this.limits.maxListBytes) throw this.#tooManyBytes(ctx, '');
  }

  parsed(entries: number, ctx: BodyContext): void {
    this.#entries += entries;
    if (this.#entries > this.limits.maxListEntries) {
      throw new SizeError(`${ctx.where}: the list has more than ${this.limits.maxListEntries} entries, the limit of REFSYNC_MAX_LIST_ENTRIES; refused`, {
        endpoint: ctx.endpoint,
      });
    }
  }

  entryTooLong(what: 'entry' | 'envelope', ctx: BodyContext): SizeError {
    const subject = what === 'entry' ? 'an entry' : "the page's text besides its entries";
    return new SizeError(`${ctx.where}: ${subject} is longer than ${this.limits.maxEntryBytes} bytes, the limit of REFSYNC_MAX_ENTRY_BYTES; refused`, {
      endpoint: ctx.endpoint,
    });
  }

  #tooManyBytes(ctx: BodyContext, why: string): SizeError {
    return new SizeError(
      `${ctx.where}: the list's answers exceed ${this.limits.maxListBytes} bytes in all${why}, the limit of REFSYNC_MAX_LIST_BYTES; refused`,
      { endpoint: ctx.endpoint },
    );
  }
}
