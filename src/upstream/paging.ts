// One response of a list, whatever its shape (a bare array or a `results` envelope), the next
// link and the origin it may point to, and the sequence of a list's pages.
import { PagingError, ProtocolError, OriginError } from './errors.ts';
import type { PageInfo } from './list-body.ts';

/** One response of a list, whatever its shape. */
export interface ListPage {
  shape: 'array' | 'envelope';
  entries: unknown[];
  /** Present when the envelope has a `next` member (null on the last page). */
  next?: string | null;
  totalCount?: number;
  totalPages?: number;
}

export interface PageContext {
  where: string;
  endpoint: string;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** Throws unless every entry is an object; `offset` is the page's entries before these, for the message. */
export function checkEntries(entries: unknown[], ctx: PageContext, offset = 0): void {
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new ProtocolError(
        `${ctx.where}: entry ${offset + i} is ${entry === null ? 'null' : Array.isArray(entry) ? 'an array' : typeof entry}, not an object`,
        {
          endpoint: ctx.endpoint,
          retryable: false,
        },
      );
    }
  }
}

/** Decides the shape of one response: a bare array (the whole list) or a `results` envelope. */
export function interpretPage(json: unknown, ctx: PageContext): ListPage {
  if (Array.isArray(json)) {
    checkEntries(json, ctx);
    return { shape: 'array', entries: json };
  }
  if (json === null || typeof json !== 'object' || !Array.isArray((json as { results?: unknown }).results)) {
    const what = json === null ? 'null' : typeof json === 'object' ? 'an object without a results array' : typeof json;
    throw new ProtocolError(`${ctx.where}: expected a JSON array or a {results: [...]} envelope, got ${what}`, {
      endpoint: ctx.endpoint,
      retryable: false,
    });
  }
  const envelope = json as Record<string, unknown>;
  const entries = envelope.results as unknown[];
  checkEntries(entries, ctx);
  const page: ListPage = { shape: 'envelope', entries };
  const totalCount = count(envelope.total_count);
  const totalPages = count(envelope.total_pages);
  if (totalCount !== undefined) page.totalCount = totalCount;
  if (totalPages !== undefined) page.totalPages = totalPages;
  if ('next' in envelope) {
    const next = envelope.next;
    if (next !== null && next !== undefined && (typeof next !== 'string' || next === '')) {
      throw new ProtocolError(`${ctx.where}: 'next' is neither a URL nor null`, { endpoint: ctx.endpoint, retryable: false });
    }
    page.next = typeof next === 'string' ? next : null;
  }
  return page;
}

/**
 * The URL a `next` link points at, accepted only on the configured origin over https and without
 * user info (the transport's own check, run as soon as the link is read).
 */
export function resolveNextLink(raw: string, current: URL, origin: URL, ctx: PageContext): URL {
  let url: URL;
  try {
    url = new URL(raw, current);
  } catch {
    throw new PagingError(`${ctx.where}: 'next' link is not a URL; refused`, { endpoint: ctx.endpoint, retryable: false });
  }
  checkOrigin(url, origin, ctx, "'next' link");
  url.hash = '';
  return url;
}

// ── The pages of one list, in sequence ──

/** Told as entries arrive: pages and entries so far, and the totals the service states. */
export interface PageProgress {
  pages: number;
  entries: number;
  totalEntries?: number;
  totalPages?: number;
}

export interface SequenceLimits {
  origin: URL;
  pageSize: number;
  maxPages: number;
}

/**
 * What follows a page once it has been read: the URL of the next one, or the end of the list, with
 * the error to throw once the page's last entries are handed over (the service made them no less
 * real). Errors that come before the hand-over are thrown by PageSequence.afterPage itself.
 */
export type PageOutcome = { next: URL } | { next?: undefined; error?: PagingError };

/**
 * The bookkeeping of one list's pages: where the current one is, entries received, the totals the
 * service states and whether they add up, and where the next page is (a `next` link, a page count,
 * a total, or a full page). Knows nothing of HTTP: the client fetches, this decides.
 */
export class PageSequence {
  readonly endpoint: string;
  readonly #limits: SequenceLimits;
  readonly #onPage: ((progress: PageProgress) => void) | undefined;
  /** Every URL requested, with its page number: a `next` link back to one is a loop. */
  readonly #seen = new Map<string, number>();
  #url: URL;
  #pageNo = 1;
  #received = 0;
  #expectedTotal: number | undefined;

  constructor(endpoint: string, limits: SequenceLimits, onPage?: (progress: PageProgress) => void) {
    this.endpoint = endpoint;
    this.#limits = limits;
    this.#onPage = onPage;
    this.#url = new URL(endpoint, limits.origin);
    this.#url.search = `page=1&page-size=${limits.pageSize}`;
  }

  /** The current page: its URL, number and message prefix. */
  get url(): URL {
    return this.#url;
  }

  get pageNo(): number {
    return this.#pageNo;
  }

  get where(): string {
    return `GET ${this.endpoint} page ${this.#pageNo}`;
  }

  /** Notes that a URL is being requested as page `n`. */
  requested(url: URL, n: number): void {
    this.#seen.set(url.href, n);
  }

  /** A page read in several batches (a whole list as one array) reports as it arrives. */
  partlyRead(pageEntries: number): void {
    this.#onPage?.({ pages: this.#pageNo, entries: this.#received + pageEntries });
  }

  /** Takes in a page read to its end (its shape and totals, and how many entries it had) and says what follows it. */
  afterPage(page: PageInfo, pageEntries: number): PageOutcome {
    if (page.shape === 'array') return this.#afterWholeList(pageEntries);
    this.#checkEnvelope(page, pageEntries);
    const next = this.#nextUrl(page, pageEntries);
    if ('error' in next) return next;
    if (!next.url) {
      if (this.#expectedTotal !== undefined && this.#received !== this.#expectedTotal) {
        return { error: this.#error(`expected ${this.#expectedTotal} entries (total_count) but got ${this.#received}`, true) };
      }
      return {};
    }
    if (this.#pageNo >= this.#limits.maxPages) {
      return { error: this.#error(`more than ${this.#limits.maxPages} pages; refusing an endless list`, false) };
    }
    return { next: next.url };
  }

  /** Moves on to the page `afterPage` pointed at. */
  advance(next: URL): void {
    this.#url = next;
    this.#pageNo++;
  }

  /** A bare array is the whole list: the end, whatever an earlier page stated. */
  #afterWholeList(pageEntries: number): PageOutcome {
    this.#received += pageEntries;
    if (this.#pageNo > 1 && this.#expectedTotal !== undefined && this.#received !== this.#expectedTotal) {
      throw this.#error(`expected ${this.#expectedTotal} entries (total_count) but got ${this.#received}`, true);
    }
    this.#onPage?.({ pages: this.#pageNo, entries: this.#received, totalEntries: this.#received, totalPages: this.#pageNo });
    return {};
  }

  /** The envelope's totals: stated the same on every page, within the page limit, not exceeded. */
  #checkEnvelope(page: PageInfo, pageEntries: number): void {
    if (page.totalCount !== undefined) {
      if (this.#expectedTotal !== undefined && page.totalCount !== this.#expectedTotal) {
        throw this.#error(`total_count changed from ${this.#expectedTotal} to ${page.totalCount} while paging (the list changed)`, true);
      }
      this.#expectedTotal = page.totalCount;
    }
    if (page.totalPages !== undefined && page.totalPages > this.#limits.maxPages) {
      throw this.#error(`the service states ${page.totalPages} pages, more than the limit of ${this.#limits.maxPages}`, false);
    }
    this.#received += pageEntries;
    if (this.#expectedTotal !== undefined && this.#received > this.#expectedTotal) {
      throw this.#error(`expected ${this.#expectedTotal} entries (total_count) but already got ${this.#received}`, true);
    }
    if (this.#onPage) {
      const progress: PageProgress = { pages: this.#pageNo, entries: this.#received };
      if (this.#expectedTotal !== undefined) progress.totalEntries = this.#expectedTotal;
      if (page.totalPages !== undefined) progress.totalPages = page.totalPages;
      this.#onPage(progress);
    }
  }

  /** Where the next page is, by the first of: a `next` link, a page count, a total, a full page. */
  #nextUrl(page: PageInfo, pageEntries: number): { url?: URL } | { error: PagingError } {
    if (page.next !== undefined) {
      if (page.next === null) return {};
      const url = resolveNextLink(page.next, this.#url, this.#limits.origin, { where: this.where, endpoint: this.endpoint });
      const earlier = this.#seen.get(url.href);
      if (earlier !== undefined) return { error: this.#error(`'next' link leads back to page ${earlier}; paging loop refused`, false) };
      return { url };
    }
    if (page.totalPages !== undefined) return this.#pageNo < page.totalPages ? { url: this.#numbered(this.#pageNo + 1) } : {};
    if (this.#expectedTotal !== undefined) {
      return this.#received < this.#expectedTotal && pageEntries > 0 ? { url: this.#numbered(this.#pageNo + 1) } : {};
    }
    // No next link and no totals: only a short page proves the end.
    return pageEntries >= this.#limits.pageSize ? { url: this.#numbered(this.#pageNo + 1) } : {};
  }

  #numbered(page: number): URL {
    const next = new URL(this.#url);
    next.searchParams.set('page', String(page));
    next.searchParams.set('page-size', String(this.#limits.pageSize));
    return next;
  }

  #error(message: string, retryable: boolean): PagingError {
    const options = retryable ? { endpoint: this.endpoint, retryable: true } : { endpoint: this.endpoint };
    return new PagingError(`${this.where}: ${message}`, options);
  }
}

// ── The origin a link may point to ──

export interface OriginContext {
  where: string;
  endpoint: string;
}

/**
 * Refuses a URL that is not on the configured origin (scheme, host and port) or carries user info.
 * Called by the transport before any request leaves, and on `next` links as soon as they are read,
 * so a credential is never sent anywhere else whatever built the URL.
 */
export function checkOrigin(url: URL, origin: URL, ctx: OriginContext, what = 'request'): void {
  if (url.username || url.password) {
    throw new OriginError(`${ctx.where}: ${what} carries user info; refused, nothing sent`, { endpoint: ctx.endpoint });
  }
  if (url.protocol !== 'https:' || url.origin !== origin.origin) {
    throw new OriginError(`${ctx.where}: ${what} points to another origin (${url.protocol}//${url.host}), not ${origin.origin}; refused, nothing sent`, {
      endpoint: ctx.endpoint,
    });
  }
}
