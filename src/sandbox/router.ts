// The upstream's endpoints: POST /v2/auth/token/, GET /v2/auth/me/, and every reference list, with
// the service's error answers, the charge-code version rules, paging and the fault switches. This
// file only dispatches and keeps the request log; the routes live in auth-routes.ts and list-route.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../util/logger.ts';
import { schemeOf } from './auth.ts';
import { login, me, ME_PATH, TOKEN_PATH } from './auth-routes.ts';
import { CONTROL_PREFIX, handleControl } from './control.ts';
import { sendJson, sleep } from './http.ts';
import { listRoute } from './list-route.ts';
import { resolveListPath } from './lists.ts';
import { notFound, type RouterContext, type SandboxRequest } from './request.ts';
import type { RequestLogEntry } from './types.ts';

async function route(ctx: RouterContext, r: SandboxRequest): Promise<number> {
  if (r.pathname === TOKEN_PATH) return login(ctx, r);
  if (r.pathname === ME_PATH) return me(ctx, r);
  const found = resolveListPath(r.pathname);
  if (found) return listRoute(ctx, r, found.list, found.carrier);
  return notFound(r);
}

function fail(logger: Logger, res: ServerResponse, err: unknown): void {
  logger.error({ err: err instanceof Error ? err.message : String(err) }, 'sandbox handler failed');
  if (!res.headersSent) sendJson(res, 500, { error: 'server_error', detail: 'Sandbox handler failed.' });
  else res.destroy();
}

/** The request's line in the request log, and its debug log line once the response closes. */
function recordRequest(ctx: RouterContext, req: IncomingMessage, res: ServerResponse, method: string, url: URL, started: number): RequestLogEntry {
  const pathname = url.pathname;
  const entry = ctx.state.record({
    method,
    path: pathname,
    query: url.search.replace(/^\?/, ''),
    authScheme: schemeOf(req.headers.authorization),
    status: 0,
  });
  res.on('close', () => {
    // Never the Authorization header, the query's values or a body: method, path, status, time.
    ctx.logger.debug({ method, path: pathname, status: res.headersSent ? res.statusCode : 0, ms: Math.round(performance.now() - started) }, 'sandbox response');
  });
  return entry;
}

export function createRequestHandler(ctx: RouterContext): (req: IncomingMessage, res: ServerResponse) => void {
  const { state, logger } = ctx;
  return (req, res) => {
    state.requests++;
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'https://sandbox.invalid');
    const pathname = url.pathname;
    const method = req.method ?? 'GET';

    if (pathname.startsWith(CONTROL_PREFIX)) {
      handleControl(req, res, pathname, ctx.control, ctx.controlSecret, ctx.journal).then(
        (status) => logger.debug({ method, path: pathname, status, ms: Math.round(performance.now() - started) }, 'sandbox control'),
        (err: unknown) => fail(logger, res, err),
      );
      return;
    }

    const entry = recordRequest(ctx, req, res, method, url, started);
    const r: SandboxRequest = { req, res, method, pathname, query: url.searchParams, entry };
    const run = async () => {
      if (state.latencyMs > 0) await sleep(state.latencyMs);
      if (res.destroyed) return;
      const status = await route(ctx, r);
      if (status) entry.status = status;
    };
    run().catch((err: unknown) => fail(logger, res, err));
  };
}
