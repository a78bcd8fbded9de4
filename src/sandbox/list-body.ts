// What one page of a list holds: its entries (with the duplicate and endless list faults mixed in),
// the paging envelope and its links, and the body faults (bad value, huge body) as a BodyPlan that
// jsonChunks streams.
import type { ListFaults } from './faults.ts';
import type { SandboxList } from './lists.ts';
import { pageUrl, totalPages, type BodyPlan, type PageMeta } from './paging.ts';
import type { RouterContext, SandboxRequest } from './request.ts';
import type { PagingConfig, DataStore } from './store.ts';
import type { Entry, VariantSelector } from './types.ts';

/** Filler entries of the endlessPages fault start at this generated index. */
const ENDLESS_BASE = 5_000_000;

/** The page asked for: 1 and the default size for a list served as one array. */
export interface PagePosition {
  page: number;
  pageSize: number;
}

/** A list variant's entries as served: how many, and any range of them, produced lazily. */
interface ServedEntries {
  total: number;
  range(start: number, end: number): Generator<Entry>;
}

function servedEntries(store: DataStore, list: SandboxList, selector: VariantSelector, lf: ListFaults): ServedEntries {
  const size = store.size(list.key, selector);
  const first = size > 0 ? store.slice(list.key, selector, 0, 1).next().value : undefined;
  const duplicate: Entry | undefined =
    lf.duplicate && first
      ? lf.duplicate === 'identical'
        ? first
        : { ...first, description: `${String(first.description ?? first.name ?? '')} (conflicting copy)` }
      : undefined;
  const total = size + (duplicate ? 1 : 0);
  function* range(start: number, end: number): Generator<Entry> {
    yield* store.slice(list.key, selector, start, Math.min(end, size));
    if (duplicate && start <= size && size < end) yield duplicate;
    if (lf.endless) for (let i = Math.max(start, total); i < end; i++) yield list.generate(ENDLESS_BASE + i);
    if (lf.endlessBody) for (let i = total; ; i++) yield list.generate(ENDLESS_BASE + i);
  }
  return { total, range };
}

/** The envelope of a paged answer, or null when the page does not exist (the endless fault makes every page exist). */
function pageMeta(ctx: RouterContext, r: SandboxRequest, shape: PagingConfig['shape'], lf: ListFaults, total: number, at: PagePosition): PageMeta | null {
  const { page, pageSize } = at;
  const realPages = totalPages(total, pageSize);
  if (page > realPages && !lf.endless) return null;
  const pages = lf.endless ? Math.max(realPages, page + 1) : realPages;
  const origin = r.req.headers.host ? `https://${r.req.headers.host}` : ctx.origin();
  const meta: PageMeta = {
    total_count: lf.endless ? Math.max(total, pages * pageSize) : total,
    total_pages: pages,
    page_size: pageSize,
  };
  const linked = shape === 'next' || lf.nextLoop || lf.endless || lf.foreignNext !== undefined;
  if (linked) {
    meta.next = page < pages ? pageUrl(origin, r.pathname, r.query, page + 1) : null;
    meta.previous = page > 1 ? pageUrl(origin, r.pathname, r.query, page - 1) : null;
    if (lf.nextLoop) meta.next = pageUrl(origin, r.pathname, r.query, page);
    if (lf.foreignNext !== undefined) meta.next = lf.foreignNext;
  }
  return meta;
}

/** The body of one page of a list, or null when that page does not exist. */
export function listBodyPlan(
  ctx: RouterContext,
  r: SandboxRequest,
  list: SandboxList,
  selector: VariantSelector,
  paging: PagingConfig,
  at: PagePosition,
): BodyPlan | null {
  const lf = ctx.state.faults.listFaults(list.key);
  const entries = servedEntries(ctx.state.store, list, selector, lf);
  const plan: BodyPlan = { shape: paging.shape, entries: [] };
  if (paging.shape === 'array') {
    plan.entries = entries.range(0, entries.total);
  } else {
    const meta = pageMeta(ctx, r, paging.shape, lf, entries.total, at);
    if (!meta) return null;
    plan.meta = meta;
    plan.entries = entries.range((at.page - 1) * at.pageSize, at.page * at.pageSize);
  }
  if (lf.badValue && (paging.shape === 'array' || at.page === 1)) plan.firstEntryField = lf.badValue;
  if (lf.hugeBytes !== undefined) {
    plan.padToBytes = lf.hugeBytes;
    plan.padEntry = list.generate(ENDLESS_BASE * 2);
  }
  return plan;
}
