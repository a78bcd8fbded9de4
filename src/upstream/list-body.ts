import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { checkJsonHeaders, declaredLength, discard, invalidJson, parseJsonBody, parseJsonText, type BodyContext } from './body.ts';
import { UpstreamError } from './errors.ts';
import type { ListBudget } from './list-budget.ts';
import { EntryTooLongError, ListSplitter, type BatchLimits, type SplitEnd } from './list-splitter.ts';
import { checkEntries, interpretPage, type ListPage } from './paging.ts';
import type { ListBatch } from './list-batch.ts';

/** A page once its body has been read: its shape and the envelope's members, without the entries. */
export type PageInfo = Omit<ListPage, 'entries'>;

/**
 * Reads one 2xx list answer as a stream: yields its entries in batches as the bytes arrive (each
 * batch checked and parsed on its own, with the text it was parsed from; every batch but the first
 * continues the page), and returns the page's shape and envelope members once the
 * body has ended. Holds at most one batch of text at a time, whatever the size of the answer; the
 * list's budget counts every byte and entry, and no entry may be longer than its limit. Errors of
 * the transport go through `transportError`.
 */
export async function* readListBody(
  body: Readable,
  headers: IncomingHttpHeaders,
  budget: ListBudget,
  batch: BatchLimits,
  ctx: BodyContext,
  transportError: (err: unknown) => unknown,
): AsyncGenerator<ListBatch, PageInfo, undefined> {
  const declared = declaredLength(headers);
  let done = false;
  try {
    budget.declared(declared, ctx);
    checkJsonHeaders(headers, ctx, declared);
    const splitter = new ListSplitter({ ...batch, maxEntryBytes: budget.limits.maxEntryBytes });
    let size = 0;
    let received = 0;
    const parseBatch = (text: string): ListBatch => {
      const entries = parseJsonText(text, ctx, size) as unknown[];
      checkEntries(entries, ctx, received);
      const continuesPage = received > 0;
      received += entries.length;
      budget.parsed(entries.length, ctx);
      return { entries, servedText: text, continuesPage };
    };
    for await (const chunk of readChunks(body, transportError)) {
      size += chunk.length;
      budget.received(chunk.length, ctx);
      let texts: string[];
      try {
        texts = splitter.push(chunk);
      } catch (err) {
        throw err instanceof EntryTooLongError ? budget.entryTooLong(err.what, ctx) : invalidJson(err, '', ctx, size);
      }
      for (const text of texts) yield parseBatch(text);
    }
    done = true;
    let end: SplitEnd;
    try {
      end = splitter.end();
    } catch (err) {
      throw invalidJson(err, '', ctx, size);
    }
    if (end.shape === 'array') return { shape: 'array' };
    // Not an array nor an object: the whole-body parse gives the message it always gave.
    const json = end.shape === 'other' ? parseJsonBody(Buffer.from(end.text), headers, ctx) : parseJsonText(end.envelope, ctx, size);
    // The envelope's results were streamed, so its text holds `"results":[]`.
    const { entries: _streamed, ...info } = interpretPage(json, ctx);
    return info;
  } finally {
    if (!done) discard(body);
  }
}

async function* readChunks(body: Readable, transportError: (err: unknown) => unknown): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body) yield chunk as Buffer;
  } catch (err) {
    throw err instanceof UpstreamError ? err : transportError(err);
  }
}
