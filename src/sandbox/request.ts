// What every sandbox route is given (the router's context and the one request it answers), with
// the plain answers the routes share: 401, 404 and 405 as the upstream words them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../util/logger.ts';
import type { AuthResult } from './auth.ts';
import { sendJson, sendText } from './http.ts';
import type { SandboxState } from './state.ts';
import type { RequestLogEntry, SandboxControl } from './types.ts';
import type { DataJournal } from './data-journal.ts';

export interface RouterContext {
  state: SandboxState;
  control: SandboxControl;
  controlSecret: string;
  /** Where data switches are recorded to survive a restart; none for a sandbox without a folder. */
  journal?: DataJournal;
  logger: Logger;
  /** The sandbox origin, for absolute links when a request carries no Host header. */
  origin: () => string;
}

/** One request being answered; `entry` is its line in the request log, whose status the route sets. */
export interface SandboxRequest {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  pathname: string;
  query: URLSearchParams;
  entry: RequestLogEntry;
}

export function unauthorized(r: SandboxRequest): number {
  return sendText(r.res, 401, 'Authorization Required', { 'www-authenticate': 'Token' });
}

export function notFound(r: SandboxRequest): number {
  return sendJson(r.res, 404, { detail: 'Not found.' });
}

export function methodNotAllowed(r: SandboxRequest, allow: string): number {
  return sendJson(r.res, 405, { detail: `Method "${r.method}" not allowed.` }, { allow });
}

export function authenticate(ctx: RouterContext, r: SandboxRequest, listKey: string | null): AuthResult {
  return ctx.state.auth.authenticate(r.req.headers.authorization, r.pathname, listKey);
}
