// Paging as the upstream does it (page-number paging, Django REST framework style): `?page=N`
// (1-based) and `?page-size=N`; a bad or out-of-range page is 404 {"detail":"Invalid page."}; a
// bad page size falls back to the default and a large one is capped. Bodies are produced as JSON
// text chunks, entry by entry, so a large list is never built in memory.
import type { Entry, PagingShape } from './types.ts';
import type { PagingConfig } from './store.ts';

export type PageParams = { ok: true; page: number; pageSize: number } | { ok: false };

export function parsePageParams(query: URLSearchParams, config: PagingConfig): PageParams {
  const rawSize = query.get('page-size');
  let pageSize = config.defaultPageSize;
  if (rawSize !== null && /^\d+$/.test(rawSize) && Number(rawSize) > 0) pageSize = Math.min(Number(rawSize), config.maxPageSize);
  const rawPage = query.get('page');
  if (rawPage === null || rawPage === '') return { ok: true, page: 1, pageSize };
  if (!/^\d+$/.test(rawPage) || Number(rawPage) < 1) return { ok: false };
  return { ok: true, page: Number(rawPage), pageSize };
}

export interface PageMeta {
  total_count: number;
  total_pages: number;
  page_size: number;
  /** Only in the 'next' shape. */
  next?: string | null;
  previous?: string | null;
}

export interface BodyPlan {
  shape: PagingShape;
  entries: Iterable<Entry>;
  /** For 'envelope' and 'next'. */
  meta?: PageMeta;
  /** hugeBody fault: one more entry, padded until the body is at least this many bytes. */
  padToBytes?: number;
  /** The entry the padding is added to. */
  padEntry?: Entry;
  /** badValue fault: the first entry serves this field as this JSON text. */
  firstEntryField?: { field: string; json: string };
}

/** An entry's JSON with one member's value written as given JSON text (replacing the member if present). */
function withRawMember(entry: Entry, field: string, json: string): string {
  const { [field]: _replaced, ...rest } = entry;
  const head = JSON.stringify(rest).slice(0, -1);
  return `${head}${head.length > 1 ? ',' : ''}${JSON.stringify(field)}:${json}}`;
}

/** Total pages of a list of `count` entries (at least 1: an empty list has one empty page). */
export function totalPages(count: number, pageSize: number): number {
  return Math.max(1, Math.ceil(count / pageSize));
}

/** The page URL on `origin` with the request's other query parameters kept. */
export function pageUrl(origin: string, pathname: string, query: URLSearchParams, page: number): string {
  const q = new URLSearchParams(query);
  q.set('page', String(page));
  return `${origin}${pathname}?${q.toString()}`;
}

const PAD_CHUNK = 'x'.repeat(64 * 1024);

/** The JSON body as text chunks; one chunk per entry (the writer batches them). */
export function* jsonChunks(plan: BodyPlan): Generator<string> {
  let bytes = 0;
  const emit = (s: string): string => {
    bytes += Buffer.byteLength(s);
    return s;
  };
  if (plan.shape === 'array') {
    yield emit('[');
  } else {
    const meta = plan.meta ?? { total_count: 0, total_pages: 1, page_size: 0 };
    const head: Record<string, unknown> = {
      total_count: meta.total_count,
      total_pages: meta.total_pages,
      page_size: meta.page_size,
    };
    if (meta.next !== undefined) head.next = meta.next;
    if (meta.previous !== undefined) head.previous = meta.previous;
    yield emit(`${JSON.stringify(head).slice(0, -1)},"results":[`);
  }
  let first = true;
  for (const entry of plan.entries) {
    const raw = first && plan.firstEntryField;
    const text = raw ? withRawMember(entry, raw.field, raw.json) : JSON.stringify(entry);
    yield emit((first ? '' : ',') + text);
    first = false;
  }
  if (plan.padToBytes !== undefined && plan.padEntry) {
    const open = `${first ? '' : ','}${JSON.stringify(plan.padEntry).slice(0, -1)},"padding":"`;
    yield emit(open);
    const closing = plan.shape === 'array' ? 3 : 4; // '"}' then ']' or ']}'
    let remaining = plan.padToBytes - bytes - closing;
    while (remaining > 0) {
      const chunk = remaining >= PAD_CHUNK.length ? PAD_CHUNK : PAD_CHUNK.slice(0, remaining);
      remaining -= chunk.length;
      yield emit(chunk);
    }
    yield emit('"}');
  }
  yield emit(plan.shape === 'array' ? ']' : ']}');
}
