import { PagingError, ProtocolError } from './errors.ts';
import { checkOrigin } from './origin.ts';

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
