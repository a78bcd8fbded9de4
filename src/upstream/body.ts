import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import sjson from 'secure-json-parse';
import { ProtocolError, SizeError } from './errors.ts';
import { parseKeepingNumbers } from './lossless-json.ts';
import { cutToChars } from '../util/bounded-text.ts';

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
 * lossless-json.ts). `bytes` is the body's size so far, for the message.
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
