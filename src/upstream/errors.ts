/**
 * One error class per failure kind, each with a string `code` (BullMQ style). Messages name the
 * endpoint by its path only (never a query, header or body that could carry a credential) and say
 * what happened. `retryable` tells the caller whether trying again later can help; `retryAfterMs`
 * carries the service's own wish on a 429/503.
 */
import { ListFailure, type ErrorCode } from '../util/error-codes.ts';

/** The codes of the upstream's failures, each declared and explained in src/util/error-codes.ts. */
export type UpstreamErrorCode = Extract<
  ErrorCode,
  'auth' | 'tls' | 'http_status' | 'protocol' | 'timeout' | 'deadline' | 'size' | 'paging' | 'network' | 'config' | 'origin_mismatch'
>;

/** Where a transport failure happened: `connect` means the request surely never reached the service. */
export type FailurePhase = 'connect' | 'request' | 'response';

export interface UpstreamErrorOptions {
  endpoint: string;
  status?: number;
  retryable?: boolean;
  retryAfterMs?: number;
  phase?: FailurePhase;
  /** A sanitized cause: only name, code and message of the low-level error are kept. */
  cause?: unknown;
}

/** Copies name/code/message only, so nothing a library attached (sockets, options, headers) leaks. */
export function sanitizeCause(err: unknown): Error | undefined {
  if (err === undefined || err === null) return undefined;
  if (err instanceof Error) {
    const copy = new Error(err.message);
    copy.name = err.name;
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') Object.assign(copy, { code });
    copy.stack = `${copy.name}: ${copy.message}`;
    return copy;
  }
  return new Error(String(err));
}

export class UpstreamError extends ListFailure {
  readonly code: UpstreamErrorCode;
  readonly endpoint: string;
  // Optional fields are declared, not defined, so an absent one is absent rather than an own `undefined`.
  declare readonly status?: number;
  readonly retryable: boolean;
  declare readonly retryAfterMs?: number;
  declare readonly phase?: FailurePhase;

  constructor(code: UpstreamErrorCode, message: string, options: UpstreamErrorOptions) {
    const cause = sanitizeCause(options.cause);
    super(message, cause ? { cause } : undefined);
    this.name = new.target.name;
    this.code = code;
    this.endpoint = options.endpoint;
    this.retryable = options.retryable ?? false;
    if (options.status !== undefined) this.status = options.status;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.phase !== undefined) this.phase = options.phase;
  }
}

/** Credentials refused (login failed, or 401 after re-login and API-key fallback). Never retried. */
export class AuthError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('auth', message, { ...options, retryable: false });
  }
}

/** Certificate not trusted, expired, wrong host, or TLS handshake failure. Never retried. */
export class TlsError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('tls', message, { ...options, retryable: false });
  }
}

/** An HTTP status the client does not turn into data (4xx other than 401, or 5xx/429 after retries). */
export class HttpStatusError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions & { status: number }) {
    super('http_status', message, options);
  }
}

/** The service answered something that is not what the protocol promises (HTML, truncated JSON, redirect). */
export class ProtocolError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('protocol', message, options);
  }
}

/** Connect, headers or body timeout. */
export class TimeoutError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('timeout', message, { retryable: true, ...options });
  }
}

/**
 * A request past REFSYNC_REQUEST_DEADLINE_S, however steadily its bytes came: an answer dripped a
 * byte at a time never trips an idle timeout. Not retried: another try would take as long.
 */
export class DeadlineError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('deadline', message, { ...options, retryable: false });
  }
}

/** A response or list larger than a size limit (maxResponseBytes, or a streamed list's limits). */
export class SizeError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('size', message, { retryable: false, ...options });
  }
}

/** Paging that cannot be trusted: a loop, too many pages, a foreign next link, totals that do not add up. */
export class PagingError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('paging', message, options);
  }
}

/** A request (or a `next` link) aimed somewhere other than the configured origin: refused before sending. */
export class OriginError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('origin_mismatch', message, { ...options, retryable: false });
  }
}

/** Connection refused, reset, DNS failure and other socket errors. */
export class NetworkError extends UpstreamError {
  constructor(message: string, options: UpstreamErrorOptions) {
    super('network', message, { retryable: true, ...options });
  }
}

/** The client was given options it cannot work with (http:// base URL, a path without trailing slash). */
export class UpstreamConfigError extends UpstreamError {
  constructor(message: string, options: Omit<UpstreamErrorOptions, 'retryable'> = { endpoint: '' }) {
    super('config', message, { ...options, retryable: false });
  }
}
