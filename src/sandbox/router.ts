// The upstream's endpoints: POST /v2/auth/token/, GET /v2/auth/me/, and every reference list, with
// the service's error answers, the charge-code version rules, paging and the fault switches.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../util/logger.ts';
import { publicUser, schemeOf, type AuthResult } from './auth.ts';
import { CONTROL_PREFIX, handleControl } from './control.ts';
import { readBody, sendJson, sendText, sleep } from './http.ts';
import { CARRIERS, resolveListPath, type SandboxList } from './lists.ts';
import { jsonChunks, pageUrl, parsePageParams, totalPages, type BodyPlan, type PageMeta } from './paging.ts';
import type { SandboxState } from './state.ts';
import { writeBody, type BodyEnding } from './stream.ts';
import type { Entry, RequestLogEntry, SandboxControl, VariantSelector } from './types.ts';

export interface RouterContext {
  state: SandboxState;
  control: SandboxControl;
  controlSecret: string;
  logger: Logger;
  /** The sandbox origin, for absolute links when a request carries no Host header. */
  origin: () => string;
}

const TOKEN_PATH = '/v2/auth/token/';
const ME_PATH = '/v2/auth/me/';
const LOGIN_BODY_LIMIT = 64 * 1024;
/** Filler entries of the endlessPages fault start at this generated index. */
const ENDLESS_BASE = 5_000_000;

const HTML_PAGE = `<!DOCTYPE html>
<html><head><title>Sign in</title></head>
<body><h1>Service temporarily unavailable</h1><p>Please sign in again or try later.</p></body></html>
`;

interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  pathname: string;
  query: URLSearchParams;
  entry: RequestLogEntry;
}

function unauthorized(r: Request): number {
  return sendText(r.res, 401, 'Authorization Required', { 'www-authenticate': 'Token' });
}

function notFound(r: Request): number {
  return sendJson(r.res, 404, { detail: 'Not found.' });
}

function methodNotAllowed(r: Request, allow: string): number {
  return sendJson(r.res, 405, { detail: `Method "${r.method}" not allowed.` }, { allow });
}

export function createRequestHandler(ctx: RouterContext): (req: IncomingMessage, res: ServerResponse) => void {
  const { state, logger } = ctx;

  /**
   * The fault for this request: a status when the fault answered it, 'stallHeaders' when it must
   * never be answered, else how its body ends ('full' when there is no fault).
   */
  function faultResponse(r: Request, listKey: string | null, page: number): number | 'stallHeaders' | BodyEnding {
    const fault = state.faults.take({ pathname: r.pathname, listKey, page });
    switch (fault.kind) {
      case 'unauthorized':
        return unauthorized(r);
      case 'rateLimit':
        return sendJson(r.res, 429, { detail: 'Request was throttled.' }, { 'retry-after': fault.retryAfter });
      case 'error':
        return sendJson(r.res, 500, { error: 'server_error', detail: 'A server error occurred.' });
      case 'html':
        return sendText(r.res, 200, HTML_PAGE, { 'content-type': 'text/html; charset=utf-8' });
      case 'stallHeaders':
        return 'stallHeaders';
      case 'truncate':
        return 'truncate';
      case 'stallBody':
        return 'stall';
      case 'resetBody':
        return 'reset';
      case 'none':
        return 'full';
    }
  }

  async function login(r: Request): Promise<number> {
    if (r.method !== 'POST') return methodNotAllowed(r, 'POST, OPTIONS');
    const fault = faultResponse(r, null, 1);
    if (typeof fault === 'number') return fault;
    if (fault === 'stallHeaders') return 0;
    const raw = await readBody(r.req, LOGIN_BODY_LIMIT);
    if (raw === null) return sendJson(r.res, 413, { detail: 'Request body too large.' });
    const type = (r.req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    let body: unknown = {};
    if (type !== '' && type !== 'application/json') {
      return sendJson(r.res, 415, { detail: `Unsupported media type "${type}" in request.` });
    }
    if (type === 'application/json') {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (err) {
        const why = err instanceof Error ? err.message : 'invalid JSON';
        return sendJson(r.res, 400, { detail: `JSON parse error - ${why}` });
      }
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      return sendJson(r.res, 400, { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] });
    }
    const fields = body as Record<string, unknown>;
    const errors: Record<string, string[]> = {};
    for (const name of ['email', 'password']) {
      const v = fields[name];
      if (v === undefined || v === null) errors[name] = ['This field is required.'];
      else if (typeof v !== 'string') errors[name] = ['Not a valid string.'];
      else if (v.trim() === '') errors[name] = ['This field may not be blank.'];
    }
    if (Object.keys(errors).length > 0) return sendJson(r.res, 400, errors);
    const result = state.auth.login(fields.email as string, fields.password as string);
    if (!result) {
      return sendJson(r.res, 400, { error: 'invalid_credentials', error_description: 'Unable to log in with provided credentials.' });
    }
    return sendJsonEnding(r, 200, {
      token: result.token,
      driver_token: null,
      driver: null,
      user: publicUser(result.account),
      api_key: result.account.apiKey,
    }, fault);
  }

  /** A JSON answer whose body may be cut by a fault. */
  function sendJsonEnding(r: Request, status: number, body: unknown, ending: BodyEnding): number {
    if (ending === 'full') return sendJson(r.res, status, body);
    r.entry.status = status;
    r.res.writeHead(status, { 'content-type': 'application/json' });
    void writeBody(r.res, [JSON.stringify(body)], ending);
    return status;
  }

  function authenticate(r: Request, listKey: string | null): AuthResult {
    return state.auth.authenticate(r.req.headers.authorization, r.pathname, listKey);
  }

  function me(r: Request): number {
    if (r.method !== 'GET' && r.method !== 'HEAD') return methodNotAllowed(r, 'GET, HEAD, OPTIONS');
    const auth = authenticate(r, null);
    if (!auth.ok) return unauthorized(r);
    const fault = faultResponse(r, null, 1);
    if (typeof fault === 'number') return fault;
    if (fault === 'stallHeaders') return 0;
    return sendJsonEnding(r, 200, publicUser(auth.account), fault);
  }

  async function list(r: Request, list: SandboxList, carrier: string | undefined): Promise<number> {
    if (r.method !== 'GET' && r.method !== 'HEAD') return methodNotAllowed(r, 'GET, HEAD, OPTIONS');
    const auth = authenticate(r, list.key);
    if (!auth.ok) return unauthorized(r);

    const selector: VariantSelector = {};
    const headers: Record<string, string> = {};
    if (list.variants === 'carrier') {
      if (!carrier || !CARRIERS.includes(carrier) || !state.store.hasVariant(list.key, carrier)) return notFound(r);
      selector.carrier = carrier;
    }
    if (list.variants === 'version') {
      const asked = r.req.headers['x-service-version'];
      const requested = typeof asked === 'string' && asked.trim() !== '' ? asked.trim() : undefined;
      const version = requested ?? auth.account.chargeCodeVersion ?? state.store.latestChargeCodeVersion();
      if (!state.store.hasVariant(list.key, version)) {
        return sendJson(r.res, 400, { error: 'invalid_version', detail: `Unknown service version '${version}'` });
      }
      selector.version = version;
      headers['x-service-version'] = version;
    }

    const paging = state.store.paging(list.key);
    let page = 1;
    let pageSize = paging.defaultPageSize;
    if (paging.shape !== 'array') {
      const params = parsePageParams(r.query, paging);
      if (!params.ok) return sendJson(r.res, 404, { detail: 'Invalid page.' });
      page = params.page;
      pageSize = params.pageSize;
    }

    const fault = faultResponse(r, list.key, page);
    if (typeof fault === 'number') return fault;
    if (fault === 'stallHeaders') return 0;

    const lf = state.faults.listFaults(list.key);
    const size = state.store.size(list.key, selector);
    const first = size > 0 ? state.store.slice(list.key, selector, 0, 1).next().value : undefined;
    const duplicate: Entry | undefined =
      lf.duplicate && first
        ? lf.duplicate === 'identical'
          ? first
          : { ...first, description: `${String(first.description ?? first.name ?? '')} (conflicting copy)` }
        : undefined;
    const total = size + (duplicate ? 1 : 0);
    const store = state.store;
    function* range(start: number, end: number): Generator<Entry> {
      yield* store.slice(list.key, selector, start, Math.min(end, size));
      if (duplicate && start <= size && size < end) yield duplicate;
      if (lf.endless) for (let i = Math.max(start, total); i < end; i++) yield list.generate(ENDLESS_BASE + i);
    }

    const plan: BodyPlan = { shape: paging.shape, entries: [] };
    if (paging.shape === 'array') {
      plan.entries = range(0, total);
    } else {
      const realPages = totalPages(total, pageSize);
      if (page > realPages && !lf.endless) return sendJson(r.res, 404, { detail: 'Invalid page.' });
      const pages = lf.endless ? Math.max(realPages, page + 1) : realPages;
      const origin = r.req.headers.host ? `https://${r.req.headers.host}` : ctx.origin();
      const meta: PageMeta = {
        total_count: lf.endless ? Math.max(total, pages * pageSize) : total,
        total_pages: pages,
        page_size: pageSize,
      };
      const linked = paging.shape === 'next' || lf.nextLoop || lf.endless || lf.foreignNext !== undefined;
      if (linked) {
        meta.next = page < pages ? pageUrl(origin, r.pathname, r.query, page + 1) : null;
        meta.previous = page > 1 ? pageUrl(origin, r.pathname, r.query, page - 1) : null;
        if (lf.nextLoop) meta.next = pageUrl(origin, r.pathname, r.query, page);
        if (lf.foreignNext !== undefined) meta.next = lf.foreignNext;
      }
      plan.meta = meta;
      plan.entries = range((page - 1) * pageSize, page * pageSize);
    }
    if (lf.badValue && (paging.shape === 'array' || page === 1)) plan.firstEntryField = lf.badValue;
    if (lf.hugeBytes !== undefined) {
      plan.padToBytes = lf.hugeBytes;
      plan.padEntry = list.generate(ENDLESS_BASE * 2);
    }

    r.entry.status = 200;
    r.res.writeHead(200, { 'content-type': 'application/json', ...headers });
    if (r.method === 'HEAD') {
      r.res.end();
      return 200;
    }
    await writeBody(r.res, jsonChunks(plan), fault);
    return 200;
  }

  async function route(r: Request): Promise<number> {
    if (r.pathname === TOKEN_PATH) return login(r);
    if (r.pathname === ME_PATH) return me(r);
    const found = resolveListPath(r.pathname);
    if (found) return list(r, found.list, found.carrier);
    return notFound(r);
  }

  return (req, res) => {
    state.requests++;
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'https://sandbox.invalid');
    const pathname = url.pathname;
    const method = req.method ?? 'GET';

    if (pathname.startsWith(CONTROL_PREFIX)) {
      handleControl(req, res, pathname, ctx.control, ctx.controlSecret).then(
        (status) => logger.debug({ method, path: pathname, status, ms: Math.round(performance.now() - started) }, 'sandbox control'),
        (err: unknown) => fail(res, err),
      );
      return;
    }

    const entry = state.record({
      method,
      path: pathname,
      query: url.search.replace(/^\?/, ''),
      authScheme: schemeOf(req.headers.authorization),
      status: 0,
    });
    res.on('close', () => {
      // Never the Authorization header, the query's values or a body: method, path, status, time.
      logger.debug(
        { method, path: pathname, status: res.headersSent ? res.statusCode : 0, ms: Math.round(performance.now() - started) },
        'sandbox response',
      );
    });
    const r: Request = { req, res, method, pathname, query: url.searchParams, entry };
    const run = async () => {
      if (state.latencyMs > 0) await sleep(state.latencyMs);
      if (res.destroyed) return;
      const status = await route(r);
      if (status) entry.status = status;
    };
    run().catch((err: unknown) => fail(res, err));
  };

  function fail(res: ServerResponse, err: unknown): void {
    logger.error({ err: err instanceof Error ? err.message : String(err) }, 'sandbox handler failed');
    if (!res.headersSent) sendJson(res, 500, { error: 'server_error', detail: 'Sandbox handler failed.' });
    else res.destroy();
  }
}
