// How a request's fault switch turns into its answer: some faults answer instead of the route
// (401, 429, 500, an HTML page), the rest decide how the route's body ends.
import { sendJson, sendText } from './http.ts';
import { unauthorized, type RouterContext, type SandboxRequest } from './request.ts';
import { writeBody, type BodyEnding } from './stream.ts';

/** The html fault's page: HTML with a 200 where JSON was expected, as a sign-in or maintenance wall serves it. */
const HTML_PAGE = `<!DOCTYPE html>
<html><head><title>Sign in</title></head>
<body><h1>Service temporarily unavailable</h1><p>Please sign in again or try later.</p></body></html>
`;

/**
 * The fault for this request: a status when the fault answered it, 'stallHeaders' when it must
 * never be answered, else how its body ends ('full' when there is no fault).
 */
export function faultResponse(ctx: RouterContext, r: SandboxRequest, listKey: string | null, page: number): number | 'stallHeaders' | BodyEnding {
  const fault = ctx.state.faults.take({ pathname: r.pathname, listKey, page });
  switch (fault.kind) {
    case 'unauthorized':
      return unauthorized(r);
    case 'rateLimit':
      return sendJson(r.res, 429, { detail: 'Request was throttled.' }, { 'retry-after': fault.retryAfter });
    case 'error':
      return sendJson(r.res, 500, { error: 'server_error', detail: 'A server error occurred.' });
    case 'errorBody':
      return sendText(r.res, fault.status, fault.body, { 'content-type': fault.contentType });
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

/** A JSON answer whose body may be cut by a fault. */
export function sendJsonEnding(r: SandboxRequest, status: number, body: unknown, ending: BodyEnding): number {
  if (ending === 'full') return sendJson(r.res, status, body);
  r.entry.status = status;
  r.res.writeHead(status, { 'content-type': 'application/json' });
  void writeBody(r.res, [JSON.stringify(body)], ending);
  return status;
}
