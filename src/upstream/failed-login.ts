// A login that failed for a reason every list of the source shares: the host cannot be reached
// (refused, not resolved, reset, a connect timeout), its certificate is not trusted, or the service
// refused the email and password. Each list used to log in again once the one before it had given
// up, each with its own retries: 21 lists against an unreachable host were 6 logins, 18 retry
// warnings and 10 s before the run failed. The failure is kept for a short while instead, and a
// list that needs a login meanwhile fails at once with the same error (so the run reports it once).
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

/** The last login's failure while it is kept, for the source's other lists to fail with. */
export class FailedLogin {
  readonly #keptMs: number;
  readonly #now: () => number;
  #failure: { error: UpstreamError; until: number } | undefined;

  constructor(keptMs = FAILED_LOGIN_KEPT_MS, now: () => number = () => performance.now()) {
    this.#keptMs = keptMs;
    this.#now = now;
  }

  /** A login failed: kept when its reason is shared (sharedByEveryLogin), forgotten otherwise. */
  failed(err: unknown): void {
    this.#failure = sharedByEveryLogin(err) ? { error: err, until: this.#now() + this.#keptMs } : undefined;
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
