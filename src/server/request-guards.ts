// What a web page in the operator's browser must not be able to do through the worker's port:
// drive the queue dashboard with a cross-site form post or `text/plain` fetch (no CORS preflight,
// cached Basic credentials attached), or read and drive it through a DNS-rebound host name.
// docs/security.md has the reasoning; each guard is a Hono middleware.
import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';

/** Methods that never change state here, so they need neither a JSON body nor a same-origin check. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The host name of a Host header value (`name:port`, `[v6]:port`), lower-cased; undefined when there is none. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end > 0 ? value.slice(1, end) : undefined;
  }
  const colon = value.indexOf(':');
  const name = colon === -1 ? value : value.slice(0, colon);
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/**
 * Whether a request for this Host may see the status page and the dashboard: `localhost`, an IP
 * literal, or a name the operator listed. A rebound name (an attacker's domain now resolving to
 * this address) is none of these, so its page cannot read or drive them.
 */
export function hostAllowed(header: string | undefined, allowed: ReadonlySet<string>): boolean {
  const name = hostName(header);
  if (!name) return false;
  return name === 'localhost' || isIP(name) !== 0 || allowed.has(name);
}

/** 421 for a Host the server does not answer to, on every path but the probes (`open`). */
export function hostGuard(allowed: ReadonlySet<string>, open: ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    if (open.has(c.req.path) || hostAllowed(c.req.header('host'), allowed)) return next();
    return c.text(`refsync: this server does not answer to that host name; add it to REFSYNC_HTTP_ALLOWED_HOSTS\n`, 421);
  };
}

/** Whether a Content-Type is JSON (`application/json`, `application/<x>+json`), parameters aside. */
export function isJsonType(value: string | undefined): boolean {
  const type = value?.split(';')[0]?.trim().toLowerCase() ?? '';
  return /^application\/([a-z0-9.-]+\+)?json$/.test(type);
}

/**
 * Every state-changing request needs a JSON body type (a form post or a `text/plain` fetch, the
 * kinds a browser sends cross-site without asking, never has one) and, when it carries an Origin,
 * the server's own: scheme http or https (behind a TLS proxy) and the Host it was sent to.
 */
export const writeGuard: MiddlewareHandler = async (c, next) => {
  if (SAFE_METHODS.has(c.req.method)) return next();
  if (!isJsonType(c.req.header('content-type'))) {
    return c.json({ error: 'a request that changes state must send Content-Type: application/json' }, 415);
  }
  const origin = c.req.header('origin');
  if (origin !== undefined && !sameOrigin(origin, c.req.header('host'))) {
    return c.json({ error: 'cross-origin request refused: its Origin is not this server' }, 403);
  }
  return next();
};

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (!host) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` (a sandboxed frame, a redirect) and anything else that is not an origin
  }
  try {
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === new URL(`http://${host.trim().toLowerCase()}`).host;
  } catch {
    return false;
  }
}

/** A read-only dashboard: any request that would change the queue gets 405, whatever bull-board allows. */
export const readOnly: MiddlewareHandler = async (c, next) => {
  if (SAFE_METHODS.has(c.req.method)) return next();
  return c.json({ error: 'the dashboard is read-only; set REFSYNC_DASHBOARD_WRITE=true (with REFSYNC_DASHBOARD_PASSWORD) to allow changes' }, 405);
};
