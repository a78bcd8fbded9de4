// The bull-board page as refsync serves it: without the Google Fonts link, and (when the dashboard
// may change the queue) with every change it sends marked as JSON, which the write guard asks for.
import type { MiddlewareHandler } from 'hono';

const googleFonts = /<link [^>]*href="https:\/\/fonts\.googleapis\.com\/[^>]*>/g;

/**
 * bull-board's buttons send bodyless PUTs (pause, resume, retry) with no Content-Type, which the
 * write guard refuses; this sets `Content-Type: application/json` on each XHR that changes state
 * and has none. It runs before the page's own scripts (they are deferred).
 */
const MARK_CHANGES_AS_JSON = `<script>(() => {
  const open = XMLHttpRequest.prototype.open, set = XMLHttpRequest.prototype.setRequestHeader, send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, ...rest) { this.refsyncMethod = String(method).toUpperCase(); this.refsyncTyped = false; return open.call(this, method, ...rest); };
  XMLHttpRequest.prototype.setRequestHeader = function (name, value) { if (String(name).toLowerCase() === 'content-type') this.refsyncTyped = true; return set.call(this, name, value); };
  XMLHttpRequest.prototype.send = function (body) {
    if (!['GET', 'HEAD', 'OPTIONS'].includes(this.refsyncMethod) && !this.refsyncTyped) set.call(this, 'Content-Type', 'application/json');
    return send.call(this, body);
  };
})();</script>`;

/**
 * Rewrites the dashboard's HTML page: every view of it would otherwise call out to Google (and
 * fail offline or behind an egress firewall; its stylesheet falls back to sans-serif).
 */
export function dashboardPage(options: { writable: boolean }): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!c.res.headers.get('content-type')?.startsWith('text/html')) return;
    let page = (await c.res.text()).replace(googleFonts, '');
    if (options.writable) page = page.replace('</head>', `${MARK_CHANGES_AS_JSON}</head>`);
    c.res = new Response(page, c.res);
  };
}
