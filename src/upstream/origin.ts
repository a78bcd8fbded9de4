import { OriginError } from './errors.ts';

export interface OriginContext {
  where: string;
  endpoint: string;
}

/**
 * Refuses a URL that is not on the configured origin (scheme, host and port) or carries user info.
 * Called by the transport before any request leaves, and on `next` links as soon as they are read,
 * so a credential is never sent anywhere else whatever built the URL.
 */
export function checkOrigin(url: URL, origin: URL, ctx: OriginContext, what = 'request'): void {
  if (url.username || url.password) {
    throw new OriginError(`${ctx.where}: ${what} carries user info; refused, nothing sent`, { endpoint: ctx.endpoint });
  }
  if (url.protocol !== 'https:' || url.origin !== origin.origin) {
    throw new OriginError(`${ctx.where}: ${what} points to another origin (${url.protocol}//${url.host}), not ${origin.origin}; refused, nothing sent`, {
      endpoint: ctx.endpoint,
    });
  }
}
