// A failure every request of a source shares, kept for a short while so that its other requests
// fail at once with it:
// - a login that failed for a reason every list shares: the host cannot be reached (refused, not
//   resolved, reset, a connect timeout), its certificate is not trusted, or the service refused the
//   email and password. Otherwise each list would log in again once the one before it had given
//   up, each with its own retries, and a run against an unreachable host would take a login and a
//   round of retry warnings per list before it failed;
// - a request that gave up on the host with a token in hand (a worker whose host went away between
//   runs): each list retried on its own, one lane after another.
import { withoutRequest } from '../util/failure-cause.ts';
import { AuthError, NetworkError, TimeoutError, TlsError, type UpstreamError } from './errors.ts';

/**
 * How long a failed login is kept. Long enough for an in-process run to start its other lists
 * (they fail within milliseconds of the first); well below the 30 s after which the worker first
 * retries a failed target job, so a retried job logs in again rather than failing unseen.
 */
export const FAILED_LOGIN_KEPT_MS = 10_000;

/**
 * Whether a login's failure is the host's or the credential's, which no other list's login could
 * avoid. A stall or a 5xx after the login was sent is not: the service may answer the next one.
 */
export function sharedByEveryLogin(err: unknown): err is UpstreamError {
  if (err instanceof NetworkError || err instanceof TlsError || err instanceof AuthError) return true;
  return err instanceof TimeoutError && err.phase === 'connect';
}

/**
 * Whether a request's failure is the host's: it was never answered (refused, not resolved, a
 * connect timeout) or its certificate is not trusted. Every request of the source meets the same;
 * a reset or a stall once the request was sent may be this request's alone.
 */
export function sharedByEveryRequest(err: unknown): err is UpstreamError {
  if (err instanceof TlsError) return true;
  return (err instanceof NetworkError || err instanceof TimeoutError) && err.phase === 'connect';
}

/**
 * The last failure of a kind every request shares, while it is kept (FAILED_LOGIN_KEPT_MS), for the
 * source's other requests to fail with.
 */
export class KeptFailure {
  readonly #shared: (err: unknown) => err is UpstreamError;
  readonly #keptMs: number;
  readonly #now: () => number;
  #failure: { error: UpstreamError; until: number } | undefined;

  constructor(shared: (err: unknown) => err is UpstreamError, keptMs = FAILED_LOGIN_KEPT_MS, now: () => number = () => performance.now()) {
    this.#shared = shared;
    this.#keptMs = keptMs;
    this.#now = now;
  }

  /** A request failed: kept when its reason is shared, forgotten otherwise. */
  failed(err: unknown): void {
    this.#failure = this.#shared(err) ? { error: err, until: this.#now() + this.#keptMs } : undefined;
  }

  succeeded(): void {
    this.#failure = undefined;
  }

  /** The kept failure, or undefined when there is none or it is past its time. */
  current(): UpstreamError | undefined {
    if (this.#failure && this.#now() >= this.#failure.until) this.#failure = undefined;
    return this.#failure?.error;
  }
}

/**
 * A kept failure of the host as another request meets it: the same error, naming that request (a
 * TLS failure names none), so that it groups with the first (src/util/failure-cause.ts).
 */
export function sameFailureFor(down: UpstreamError, where: string, endpoint: string): UpstreamError {
  const options = { endpoint, retryable: down.retryable, ...(down.phase ? { phase: down.phase } : {}) };
  if (down instanceof TlsError) return new TlsError(down.message, options);
  const message = `${where}: ${withoutRequest(down.message)}`;
  return down instanceof TimeoutError ? new TimeoutError(message, options) : new NetworkError(message, options);
}

/** The last login's failure while it is kept, for the source's other lists to fail with. */
export class FailedLogin extends KeptFailure {
  constructor(keptMs = FAILED_LOGIN_KEPT_MS, now: () => number = () => performance.now()) {
    super(sharedByEveryLogin, keptMs, now);
  }
}
