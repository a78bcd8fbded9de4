import type { PagesRequest } from './client.ts';

/**
 * One batch of a list as fetched: a page, or part of a large page (a bare array of the whole list
 * comes in several). Everything the sync makes of a fetch travels in it, typed, so a client or a
 * test double that yields batches has to say what it knows of each: a double that drops the served
 * text is visibly one that turns the unchanged fast path off.
 */
export interface ListBatch {
  /** The batch's entries, parsed, each checked to be an object. */
  entries: unknown[];
  /**
   * The JSON text the entries were parsed from, exactly as served (a JSON array of whole entries,
   * list-body.ts#ListSplitter): what a small list's served digest is made of (sync/collect/collect.ts).
   * Null for entries not read from an answer: such a list has no served digest, and is normalised.
   */
  servedText: string | null;
  /** Whether the batch continues the page of the batch before it, rather than starting a page. */
  continuesPage: boolean;
}

/** Entries made into a batch that starts a page, with the text they were parsed from if there is one. */
export function listBatch(entries: unknown[], servedText: string | null = null): ListBatch {
  return { entries, servedText, continuesPage: false };
}

/** Where a sync fetches a list from: the upstream client, or a test's or a bench's stand-in for it. */
export interface PageSource {
  pages(request: PagesRequest): AsyncIterable<ListBatch>;
}
