import type { Dispatcher } from 'undici';
import type { ClientConnections } from './client-connections.ts';
import { NetworkError, ProtocolError, TimeoutError, TlsError, UpstreamConfigError } from './errors.ts';
import { checkOrigin } from './origin.ts';

export type HttpMethod = 'GET' | 'POST';

export interface SendRequest {
  method: HttpMethod;
  url: URL;
  /** Path-only label used in messages and logs. */
  endpoint: string;
  /** Message prefix: method, endpoint and page. */
  where: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export type SendResponse = Dispatcher.ResponseData;

/**
 * Sends one request to the configured origin; every low-level failure comes back as an UpstreamError
 * without a header in it. The one place every upstream request leaves from, so the origin check is
 * here: a URL elsewhere (whatever built it) is refused before a byte, and its credential, is sent.
 */
export async function send(connections: ClientConnections, origin: URL, req: SendRequest): Promise<SendResponse> {
  checkOrigin(req.url, origin, req);
  checkHeaderValues(req);
  try {
    return await connections.request({
      origin: origin.origin,
      path: req.url.pathname + req.url.search,
      method: req.method,
      headers: req.headers,
      body: req.body ?? null,
      signal: req.signal ?? null,
    });
  } catch (err) {
    throw mapTransportError(err, req, 'before the response headers');
  }
}

/**
 * Characters no header value may hold (controls but tab; DEL), the ones undici refuses with
 * UND_ERR_INVALID_ARG. Checked here, before undici sees them: besides failing, such a request as
 * the first on a fresh connection pool (undici 8, HTTP/2 allowed) leaves that pool waiting forever,
 * and the pool is shared by every source on the origin (see shared-agents.ts).
 */
const unsendableInHeader = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function checkHeaderValues(req: SendRequest): void {
  for (const [name, value] of Object.entries(req.headers)) {
    if (unsendableInHeader.test(value)) {
      throw new UpstreamConfigError(`${req.where}: the ${name} header would hold a control character (CR, LF, NUL or the like); not sent`, {
        endpoint: req.endpoint,
      });
    }
  }
}

/** Errors of the request as built, not of the network: sending it again cannot help. */
const invalidRequestCodes = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE',
  'ERR_INVALID_CHAR',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_INVALID_URL',
  'ERR_HTTP_INVALID_HEADER_VALUE',
]);

const tlsTrustCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);
const connectCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

function hostOf(url: URL): string {
  return url.host || url.hostname;
}

/** The most specific error code in the cause chain (undici wraps a socket's own error). */
function codeOf(err: unknown): string | undefined {
  let fallback: string | undefined;
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (code !== 'UND_ERR_SOCKET') return code;
      fallback = code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return fallback;
}

/**
 * Turns an undici/node error into the client's error kinds. `when` says what the client was doing
 * ("before the response headers", "reading the body") for the message.
 */
export function mapTransportError(err: unknown, req: Pick<SendRequest, 'where' | 'endpoint' | 'url' | 'signal'>, when: string): unknown {
  if (req.signal?.aborted) return req.signal.reason ?? err;
  const code = codeOf(err) ?? '';
  const { where } = req;
  const host = hostOf(req.url);
  const options = { endpoint: req.endpoint, cause: err };
  if (tlsTrustCodes.has(code)) {
    return new TlsError(`TLS: certificate of ${host} is not trusted (${code}); set REFSYNC_CA_FILE to the CA that signed it`, options);
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') {
    return new TlsError(`TLS: certificate of ${host} does not name that host (${code})`, options);
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return new TlsError(`TLS: certificate of ${host} is not valid now (${code})`, options);
  }
  if (invalidRequestCodes.has(code)) {
    return new UpstreamConfigError(`${where}: the request cannot be sent as built (${code}); not retried`, options);
  }
  if (code.startsWith('ERR_OSSL_')) {
    // OpenSSL refusing a key, certificate or context: the TLS settings are wrong, not the network.
    return new TlsError(`TLS: the TLS settings for ${host} are not usable (${code}); check REFSYNC_CA_FILE`, options);
  }
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO') {
    return new TlsError(`TLS: handshake with ${host} failed (${code}); is it an HTTPS server?`, options);
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new TimeoutError(`${where}: connect to ${host} timed out`, { ...options, phase: 'connect' });
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new TimeoutError(`${where}: no response headers within the headers timeout`, { ...options, phase: 'response' });
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return new TimeoutError(`${where}: response body stalled beyond the body timeout`, { ...options, phase: 'response' });
  }
  if (connectCodes.has(code)) {
    return new NetworkError(`${where}: cannot connect to ${host} (${code})`, { ...options, phase: 'connect' });
  }
  if (code.startsWith('HPE_') || code === 'UND_ERR_INFO') {
    return new ProtocolError(`${where}: malformed HTTP response ${when} (${code})`, { ...options, retryable: true });
  }
  const detail = code || (err instanceof Error ? err.message.slice(0, 80) : 'unknown error');
  return new NetworkError(`${where}: connection failed ${when} (${detail})`, { ...options, phase: 'response' });
}
