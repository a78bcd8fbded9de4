// A list's answer read as it arrives: the body within its limits, split into batches at the list's
// own commas, its numbers kept as served.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import sjson from 'secure-json-parse';
import { UpstreamError, ProtocolError, SizeError } from './errors.ts';
import { checkEntries, interpretPage, type ListPage } from './paging.ts';
import type { ListBatch } from './list-batch.ts';
import { cutToChars } from '../util/bounded-text.ts';

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

// ── Reading a response body ──

export interface BodyContext {
  /** e.g. `GET /v2/shipments/nmfc/ page 7`, used as the message prefix. */
  where: string;
  endpoint: string;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Drops a body without reading it; undici reports the drop as an error event, which is expected here. */
export function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * Reads a whole body but never more than `maxBytes`: a Content-Length above the cap is refused before
 * reading, and a body that grows past it is destroyed at that point. On any failure the stream is
 * destroyed, so the connection is never left half-read.
 */
export async function readCapped(body: Readable, headers: IncomingHttpHeaders, maxBytes: number, ctx: BodyContext): Promise<Buffer> {
  const declared = declaredLength(headers);
  if (declared !== undefined && declared > maxBytes) {
    discard(body);
    throw new SizeError(`${ctx.where}: response of ${declared} bytes exceeds the limit of ${maxBytes} bytes (Content-Length)`, {
      endpoint: ctx.endpoint,
    });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > maxBytes) {
        throw new SizeError(`${ctx.where}: response exceeds the limit of ${maxBytes} bytes`, { endpoint: ctx.endpoint });
      }
      chunks.push(buf);
    }
  } catch (err) {
    discard(body);
    throw err;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/** Reads at most `limit` bytes of an error body for its message, then drops the rest of the stream. */
export async function readSnippet(body: Readable, limit = 16 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      chunks.push(buf);
      size += buf.length;
      if (size >= limit) break;
    }
  } catch {
    // The status already says what went wrong; a broken error body adds nothing.
  } finally {
    discard(body);
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

const forbiddenKey = /forbidden prototype property/;

/**
 * Refuses a 2xx answer whose headers say it is not JSON: an HTML (or other non-JSON) content type,
 * or a Content-Encoding other than identity. `bytes` is its size when known, for the message.
 */
export function checkJsonHeaders(headers: IncomingHttpHeaders, ctx: BodyContext, bytes: number | undefined): void {
  const type = (header(headers, 'content-type') ?? '').toLowerCase();
  const encoding = (header(headers, 'content-encoding') ?? 'identity').toLowerCase();
  if (encoding !== 'identity') {
    throw new ProtocolError(`${ctx.where}: unexpected Content-Encoding '${encoding.slice(0, 40)}'`, { endpoint: ctx.endpoint, retryable: false });
  }
  if (type && !/^application\/([a-z0-9.+-]*\+)?json\b/.test(type)) {
    const kind = type.startsWith('text/html') ? 'an HTML page' : `'${type.split(';')[0]!.slice(0, 60)}'`;
    throw new ProtocolError(`${ctx.where}: answered ${kind} instead of JSON (status 2xx${bytes === undefined ? '' : `, ${bytes} bytes`})`, {
      endpoint: ctx.endpoint,
      retryable: true,
    });
  }
}

/** The Content-Length of an answer, when it states one. */
export function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  const declared = Number(header(headers, 'content-length'));
  return Number.isFinite(declared) ? declared : undefined;
}

/**
 * Parses JSON text (a whole body, or a batch of a list's entries), refusing `__proto__` /
 * `constructor.prototype` keys. Numbers a double would round are kept with every digit (see
 * parseKeepingNumbers, below). `bytes` is the body's size so far, for the message.
 */
export function parseJsonText(text: string, ctx: BodyContext, bytes: number): unknown {
  try {
    return parseKeepingNumbers(text, (reviver) => sjson.parse(text, reviver, { protoAction: 'error', constructorAction: 'error' }));
  } catch (err) {
    throw invalidJson(err, text, ctx, bytes);
  }
}

/** The error for JSON that does not parse: a forbidden key is refused for good, anything else may be a broken transfer. */
export function invalidJson(err: unknown, text: string, ctx: BodyContext, bytes: number): ProtocolError {
  const message = err instanceof Error ? err.message : String(err);
  if (forbiddenKey.test(message)) {
    return new ProtocolError(`${ctx.where}: JSON carries a forbidden __proto__ or constructor.prototype key; refused`, {
      endpoint: ctx.endpoint,
      retryable: false,
    });
  }
  const looksHtml = /^\s*</.test(text);
  const what = looksHtml ? 'an HTML page' : 'truncated or invalid JSON';
  return new ProtocolError(`${ctx.where}: answered ${what} (${bytes} bytes: ${message.slice(0, 100)})`, {
    endpoint: ctx.endpoint,
    retryable: true,
  });
}

/**
 * Parses a 2xx body as JSON: refuses a non-JSON content type or encoding, an empty or truncated
 * body, and forbidden keys. Never returns a default value on failure.
 */
export function parseJsonBody(buf: Buffer, headers: IncomingHttpHeaders, ctx: BodyContext): unknown {
  checkJsonHeaders(headers, ctx, buf.length);
  const text = buf.toString('utf8');
  if (text.trim() === '') {
    throw new ProtocolError(`${ctx.where}: answered an empty body instead of JSON`, { endpoint: ctx.endpoint, retryable: true });
  }
  return parseJsonText(text, ctx, buf.length);
}

/**
 * The service's error body in one short line: `error`, `error_description`, `detail`, field errors
 * (`{"field": ["msg"]}`), or the text itself. Lenient: any shape gives something readable.
 * `scrub` removes secrets: it runs on the raw text and on every string decoded from it, before
 * whitespace is collapsed and the line cut, so no variant or part of a secret outlives it.
 */
export function summarizeErrorBody(text: string, max = 200, scrub: (text: string) => string = (t) => t): string {
  const trimmed = scrub(text).trim();
  if (trimmed === '') return '';
  let summary: string;
  try {
    summary = describeJson(JSON.parse(trimmed), scrub);
  } catch {
    summary = /^\s*</.test(trimmed) ? htmlTitle(trimmed) : trimmed;
  }
  return cutToChars(scrub(summary.replace(/\s+/g, ' ').trim()), max);
}

function describeJson(value: unknown, scrub: (text: string) => string): string {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((v) => describeJson(v, scrub)).join('; ');
  if (value === null || typeof value !== 'object') return String(value);
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of ['error', 'error_description', 'detail', 'message']) {
    const v = obj[key];
    if (v !== undefined && v !== null && v !== '') parts.push(describeJson(v, scrub));
  }
  if (parts.length > 0) return parts.join(': ');
  return Object.entries(obj)
    .map(([k, v]) => `${scrub(k)}: ${describeJson(v, scrub)}`)
    .join('; ');
}

function htmlTitle(html: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(html)?.[1]?.trim();
  return title ? `HTML page '${title}'` : 'an HTML page';
}

// ── Splitting a streamed list into batches ──
// A list answer of a million entries is ~100 MB of JSON. Held whole as text and then as one parsed
// array it costs several times that; split at the list's own commas as the bytes arrive, it is
// parsed a few hundred KB at a time and each batch can be handed on (and dropped) before the next.

/**
 * Where a batch ends: at a comma after at least `entries` elements (the page size, so a page of the
 * size asked for is never cut) and `minBytes`, or after `maxBytes` whatever the count. No element,
 * and no text outside the streamed array, may be longer than `maxEntryBytes`: that, not the size of
 * the body, is what the splitter ever holds at once.
 */
export interface BatchLimits {
  entries: number;
  minBytes: number;
  maxBytes: number;
  /** No limit when absent. */
  maxEntryBytes?: number;
}

/** An element, or the text around the streamed array, longer than maxEntryBytes. */
export class EntryTooLongError extends Error {
  readonly what: 'entry' | 'envelope';

  constructor(what: 'entry' | 'envelope') {
    super(what === 'entry' ? 'an entry is longer than the limit' : 'the text besides the entries is longer than the limit');
    this.what = what;
  }
}

/**
 * Least bytes of a batch of a bare array of the whole list. In P3 (a million entries of ~100 bytes)
 * batches of 128 KB peaked at 268-317 MiB against 291-372 MiB for batches of 1,000 entries
 * (one run each on a shared VM; what V8 keeps between collections varies from run to run).
 */
export const MIN_BATCH_BYTES = 128 * 1024;
/** Bounds a batch of very large entries. */
export const MAX_BATCH_BYTES = 8 * 2 ** 20;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
/** A key spelled with escapes (`"res\u0075lts"`) still fits; longer keys are never `results`. */
const MAX_KEY_BYTES = 64;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** What is left once the body has ended, beside the batches already handed out. */
export type SplitEnd =
  | { shape: 'array' }
  /** The envelope's text with its `results` array emptied (`"results":[]`), to be parsed for the other members. */
  | { shape: 'envelope'; envelope: string }
  /** Neither an array nor an object: the whole text, for the ordinary parse and its messages. */
  | { shape: 'other'; text: string };

/**
 * Splits the bytes of a bare JSON array, or of the `results` array of an envelope object, into
 * batches of whole elements, each returned as the text of a JSON array (`[e1,e2,...]`). Tracks only
 * strings, escapes and nesting depth: the batches themselves go to JSON.parse, which checks the rest.
 * Splits only at ASCII commas outside strings, so a multi-byte character is never cut.
 */
export class ListSplitter {
  readonly #limits: Required<BatchLimits>;
  /** Elements ended by a comma in the batch being gathered. */
  #batchEntries = 0;
  #started = false;
  #shape: 'array' | 'envelope' | 'other' = 'other';
  #ended = false;
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Depth inside the streamed array, or 0 when not inside it. */
  #streamDepth = 0;
  #streamed = false;
  /** Element bytes of the batch being gathered, from earlier chunks. */
  #pieces: Buffer[] = [];
  #pieceBytes = 0;
  #elementOpen = false;
  #sawComma = false;
  /** The envelope outside the results array (or the whole text of an 'other' answer). */
  #outside: Buffer[] = [];
  #keyBytes: number[] = [];
  #lastString = '';
  #lastKey = '';
  /** Bytes of the body before the chunk being scanned. */
  #consumed = 0;
  /** Where the element being read began, as an offset in the body. */
  #entryStart = 0;
  #outsideBytes = 0;

  constructor(limits: BatchLimits) {
    this.#limits = { maxEntryBytes: Infinity, ...limits };
  }

  /**
   * Takes the next chunk of the body; returns the batches it completed. Throws on what cannot be
   * JSON, and EntryTooLongError as soon as an element or the envelope is too long, ended or not.
   */
  push(chunk: Buffer): string[] {
    const batches = this.#scan(chunk);
    this.#consumed += chunk.length;
    const max = this.#limits.maxEntryBytes;
    if (this.#streamDepth > 0 && this.#consumed - this.#entryStart > max) throw new EntryTooLongError('entry');
    if (this.#outsideBytes > max) throw new EntryTooLongError('envelope');
    return batches;
  }

  /**
   * The scan of one chunk.
   * Long because it is one loop over every byte of the body (100 MB for a bare array of a million
   * entries), with the scanner's state in locals: split into helpers, each byte would pay a call
   * and the state's trip through the object's fields.
   */
  #scan(chunk: Buffer): string[] {
    const batches: string[] = [];
    let i = 0;
    if (!this.#started) {
      while (i < chunk.length && isSpace(chunk[i]!)) i++;
      if (i === chunk.length) return batches;
      this.#started = true;
      const first = chunk[i]!;
      this.#shape = first === OPEN_ARRAY ? 'array' : first === OPEN_OBJECT ? 'envelope' : 'other';
    }
    if (this.#shape === 'other') {
      this.#keepOutside(chunk);
      return batches;
    }
    // The state lives in locals through the loop (it runs once per byte of a 100 MB body).
    let depth = this.#depth;
    let streamDepth = this.#streamDepth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    let elementOpen = this.#elementOpen;
    const envelope = this.#shape === 'envelope';
    // Start of the current piece: of the streamed elements when inside the array, else of the outside text.
    let from = i;
    let nextBackslash = -1;
    for (; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (inString) {
        if (escaped) {
          escaped = false;
          if (envelope && depth === 1) this.#keyByte(byte);
          continue;
        }
        if (envelope && depth === 1) {
          // A member name of the envelope: read byte by byte, to know when it is `results`.
          this.#keyByte(byte);
          if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) {
            inString = false;
            this.#lastString = this.#decodeKey();
          }
          continue;
        }
        // Inside an entry's string: jump to its next quote or backslash (indexOf is native code).
        if (nextBackslash < i) {
          nextBackslash = chunk.indexOf(BACKSLASH, i);
          if (nextBackslash === -1) nextBackslash = chunk.length;
        }
        let quote = chunk.indexOf(QUOTE, i);
        if (quote === -1) quote = chunk.length;
        if (nextBackslash < quote) {
          i = nextBackslash;
          escaped = true;
        } else if (quote < chunk.length) {
          i = quote;
          inString = false;
        } else {
          i = chunk.length;
        }
        continue;
      }
      if (isSpace(byte)) continue;
      if (this.#ended) throw new Error('unexpected data after the JSON value');
      if (streamDepth === 1) {
        // Between elements of the streamed array: a comma may close a batch, the bracket closes the array.
        if (byte === COMMA) {
          if (!elementOpen) throw new Error('empty element in the list array');
          elementOpen = false;
          this.#sawComma = true;
          this.#entryEnds(i);
          const bytes = this.#pieceBytes + (i - from);
          const { entries, minBytes, maxBytes } = this.#limits;
          if ((++this.#batchEntries >= entries && bytes >= minBytes) || bytes >= maxBytes) {
            batches.push(this.#batch(chunk.subarray(from, i)));
            from = i + 1;
          }
          continue;
        }
        if (byte === CLOSE_ARRAY) {
          if (!elementOpen && this.#sawComma) throw new Error('trailing comma in the list array');
          this.#entryEnds(i);
          const last = this.#batch(chunk.subarray(from, i));
          if (elementOpen) batches.push(last);
          streamDepth = 0;
          depth--;
          from = i;
          if (depth === 0) this.#ended = true;
          continue;
        }
      }
      if (streamDepth > 0) elementOpen = true;
      if (byte === QUOTE) {
        inString = true;
        if (envelope && depth === 1) this.#keyBytes = [byte];
      } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
        depth++;
        if (streamDepth > 0) streamDepth++;
        else if (byte === OPEN_ARRAY && (envelope ? depth === 2 && this.#lastKey === 'results' : depth === 1)) {
          if (this.#streamed) throw new Error("the envelope has more than one 'results' member");
          this.#streamed = true;
          streamDepth = 1;
          elementOpen = false;
          this.#entryStart = this.#consumed + i + 1;
          this.#keepOutside(chunk.subarray(from, i + 1));
          from = i + 1;
        }
      } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
        depth--;
        if (streamDepth > 0) streamDepth--;
        if (depth < 0) throw new Error('unbalanced closing bracket');
        if (depth === 0) this.#ended = true;
      } else if (depth === 1 && byte === COLON) {
        this.#lastKey = this.#lastString;
      } else if (depth === 1 && byte === COMMA) {
        this.#lastKey = '';
      }
    }
    this.#depth = depth;
    this.#streamDepth = streamDepth;
    this.#inString = inString;
    this.#escaped = escaped;
    this.#elementOpen = elementOpen;
    if (streamDepth > 0) {
      this.#pieces.push(chunk.subarray(from));
      this.#pieceBytes += chunk.length - from;
    } else if (from < chunk.length) {
      this.#keepOutside(chunk.subarray(from));
    }
    return batches;
  }

  /** Called once the body has ended; throws when it ended early. */
  end(): SplitEnd {
    if (this.#shape === 'other') return { shape: 'other', text: Buffer.concat(this.#outside).toString('utf8') };
    if (!this.#ended || this.#inString) throw new Error('unexpected end of the JSON text (truncated)');
    if (this.#shape === 'array') return { shape: 'array' };
    return { shape: 'envelope', envelope: Buffer.concat(this.#outside).toString('utf8') };
  }

  /** An element ended at offset i of the chunk being scanned: checked, and the next one begins after it. */
  #entryEnds(i: number): void {
    const end = this.#consumed + i;
    if (end - this.#entryStart > this.#limits.maxEntryBytes) throw new EntryTooLongError('entry');
    this.#entryStart = end + 1;
  }

  #keepOutside(part: Buffer): void {
    this.#outside.push(part);
    this.#outsideBytes += part.length;
  }

  #keyByte(byte: number): void {
    if (this.#keyBytes.length <= MAX_KEY_BYTES) this.#keyBytes.push(byte);
  }

  /** The envelope member name just read, unescaped; '' when it is too long to be `results` or is not valid. */
  #decodeKey(): string {
    if (this.#keyBytes.length > MAX_KEY_BYTES) return '';
    try {
      return JSON.parse(Buffer.from(this.#keyBytes).toString('utf8')) as string;
    } catch {
      return '';
    }
  }

  #batch(tail: Buffer): string {
    this.#pieces.push(tail);
    const text = `[${Buffer.concat(this.#pieces, this.#pieceBytes + tail.length).toString('utf8')}]`;
    this.#pieces = [];
    this.#pieceBytes = 0;
    this.#batchEntries = 0;
    return text;
  }
}

// ── Numbers as served ──
// Numbers as served. JSON.parse turns every number into a double, which rounds an integer past
// 2^53 or a decimal with more than about 16 significant digits, and makes 1e400 Infinity: the
// payload would no longer be the entry as served, and a change in the 17th digit would go unseen.
// Such numbers are kept as JSON.rawJSON (the literal itself), which JSON.stringify writes back
// verbatim and Postgres stores exactly (jsonb numbers are numeric).

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * A number literal that a double may not hold exactly: 16 or more digits and points in a row, or an
 * exponent, where a value starts. Strings can match too (`":1234567890123456"`); that only costs
 * the slower parse of that page.
 */
const unsafeLiteral = /[:,[]\s*-?(?:[\d.]{16}|[\d.]+[eE])/;

const literal = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** The decimal value of a literal as sign, significant digits and exponent: `1.50e2` and `150` agree. */
function decimalValue(text: string): string | undefined {
  const m = literal.exec(text);
  if (!m) return undefined;
  const whole = m[2]!;
  let digits = whole + (m[3] ?? '');
  let exponent = whole.length + Number(m[4] ?? 0);
  let start = 0;
  while (start < digits.length && digits[start] === '0') start++;
  exponent -= start;
  let end = digits.length;
  while (end > start && digits[end - 1] === '0') end--;
  digits = digits.slice(start, end);
  return digits === '' ? '0' : `${m[1]}${digits}e${exponent}`;
}

/** Whether the double parsed from `source` still denotes the number written there. */
function keptExactly(source: string, value: number): boolean {
  if (String(value) === source) return true;
  const served = decimalValue(source);
  return served !== undefined && served === decimalValue(String(value));
}

const keepDigits: Reviver = (_key, value, context) => {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  return keptExactly(context.source, value) ? value : JSON.rawJSON(context.source);
};

/**
 * Parses JSON text with `parse` (JSON.parse or a wrapper taking the same reviver), keeping every
 * number a double would round as raw JSON. The reviver costs a call per value, so it is used only
 * when a cheap scan of the text finds a literal that may need it.
 */
export function parseKeepingNumbers(text: string, parse: (reviver: Reviver | null) => unknown): unknown {
  if (!unsafeLiteral.test(text)) return parse(null);
  try {
    return parse(keepDigits);
  } catch (err) {
    // The reviver walks the parsed value recursively and can exhaust the stack on hostile nesting,
    // which plain JSON.parse survives; the entry is then refused by the depth limit, naming it.
    if (err instanceof RangeError) return parse(null);
    throw err;
  }
}

// ── What one streamed list may take ──

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
