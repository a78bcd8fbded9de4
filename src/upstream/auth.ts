// The machine user's credentials: a token login or an API key, the header each request carries,
// the one re-login a 401 earns, and a failed login shared by a source's requests for a while.
import { AuthError, NetworkError, TimeoutError, TlsError, type UpstreamError } from './errors.ts';
import { withoutRequest } from '../util/failure-cause.ts';

export type ApiKeyScheme = 'apikey' | 'bearer' | 'basic';
export type AuthScheme = 'token' | ApiKeyScheme;

export interface Credentials {
  email?: string;
  password?: string;
  apiKey?: string;
  apiKeyScheme: ApiKeyScheme;
}

export interface LoginResult {
  token: string;
  apiKey?: string;
}

/** The Authorization header for one request, and what it was made of. */
export interface Credential {
  scheme: AuthScheme;
  header: string;
  /** Which login produced the token (tokens only), so a 401 can tell a stale token from a refused one. */
  generation?: number;
}

/** What one request has already tried after 401s; bounds the recovery to one re-login and one key. */
export interface AuthAttempt {
  reloggedIn: boolean;
  keyTried: boolean;
}

/** Longest token or key a login answer may hand out (JWTs are a few hundred bytes to a few KB). */
const MAX_CREDENTIAL_LENGTH = 8192;

/**
 * Why a token or key from the service cannot go into an Authorization header, or undefined when it
 * can: it must be visible ASCII (no space, control character or line break that could split the
 * header) and of a sane length. Never quotes the value.
 */
export function unusableCredential(value: string): string | undefined {
  if (value.length > MAX_CREDENTIAL_LENGTH) return `${value.length} characters, more than ${MAX_CREDENTIAL_LENGTH}`;
  if (!/^[\x21-\x7e]+$/.test(value)) return 'holds characters other than visible ASCII (control characters, spaces or line breaks)';
  return undefined;
}

function keyHeader(scheme: ApiKeyScheme, key: string): string {
  if (scheme === 'bearer') return `Bearer ${key}`;
  if (scheme === 'basic') return `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
  return `APIkey ${key}`;
}

/**
 * The credential state of one client, in memory only: the token of the last login (one login in
 * flight at a time, shared by every request that needs it), a login's failure that every request
 * would meet again (below), the API key (configured, or the `api_key` of the login
 * answer), and the endpoints that have proven to need the key.
 */
export class Session {
  readonly #credentials: Credentials;
  readonly #login: () => Promise<LoginResult>;
  #token: string | undefined;
  #generation = 0;
  #loginKey: string | undefined;
  #inFlight: Promise<void> | undefined;
  readonly #failedLogin: FailedLogin;
  readonly #needsKey = new Set<string>();

  constructor(credentials: Credentials, login: () => Promise<LoginResult>, failedLogin = new FailedLogin()) {
    this.#credentials = credentials;
    this.#login = login;
    this.#failedLogin = failedLogin;
  }

  get usesLogin(): boolean {
    return Boolean(this.#credentials.email && this.#credentials.password);
  }

  /** Every secret the session holds now, for scrubbing text that came back from the service. */
  secrets(): string[] {
    const { password, apiKey } = this.#credentials;
    return [password, apiKey, this.#token, this.#loginKey].filter((s): s is string => typeof s === 'string' && s.length >= 4);
  }

  #key(): Credential | undefined {
    const { apiKey, apiKeyScheme } = this.#credentials;
    if (apiKey) return { scheme: apiKeyScheme, header: keyHeader(apiKeyScheme, apiKey) };
    // The login answer's key is documented for the APIkey form only.
    if (this.#loginKey) return { scheme: 'apikey', header: keyHeader('apikey', this.#loginKey) };
    return undefined;
  }

  async credentialFor(endpoint: string, attempt: AuthAttempt): Promise<Credential> {
    if (!this.usesLogin) {
      const key = this.#key();
      if (!key) throw new AuthError(`${endpoint}: no credentials configured`, { endpoint });
      return key;
    }
    if (attempt.keyTried || this.#needsKey.has(endpoint)) {
      const key = this.#key();
      if (key) return key;
    }
    if (this.#token === undefined) await this.#loginOnce();
    return { scheme: 'token', header: `Token ${this.#token!}`, generation: this.#generation };
  }

  /**
   * A request was answered 401. Decides the one next step: a fresh login (once per request), then
   * the API key (once), else a terminal AuthError — never a loop that could lock the account out.
   */
  async onUnauthorized(where: string, endpoint: string, used: Credential, attempt: AuthAttempt, detail: string): Promise<void> {
    const suffix = detail ? ` (${detail})` : '';
    if (used.scheme === 'token' && !attempt.reloggedIn) {
      attempt.reloggedIn = true;
      await this.#relogin(used.generation ?? 0);
      return;
    }
    if (used.scheme === 'token' && !attempt.keyTried) {
      if (this.#key()) {
        attempt.keyTried = true;
        return;
      }
      throw new AuthError(`${where}: 401 even with a fresh token, and no API key to fall back on${suffix}`, { endpoint, status: 401 });
    }
    const how = this.usesLogin ? 'with the API key after a fresh token was refused' : `with the API key (${used.scheme})`;
    throw new AuthError(`${where}: 401 ${how}; credential not authorized for this endpoint${suffix}`, { endpoint, status: 401 });
  }

  /** The request succeeded: a key that worked where a token did not is remembered for the endpoint. */
  onSuccess(endpoint: string, used: Credential): void {
    if (this.usesLogin && used.scheme !== 'token') this.#needsKey.add(endpoint);
  }

  async #relogin(staleGeneration: number): Promise<void> {
    // Another request already replaced the token this one used: use the new one.
    if (this.#generation > staleGeneration && this.#token !== undefined) return;
    this.#token = undefined;
    await this.#loginOnce();
  }

  #loginOnce(): Promise<void> {
    // No login is sent while the last one's failure is kept: it would fail the same way.
    const failed = this.#inFlight ? undefined : this.#failedLogin.current();
    if (failed) return Promise.reject(failed);
    this.#inFlight ??= this.#login()
      .then(
        (result) => {
          this.#token = result.token;
          if (result.apiKey) this.#loginKey = result.apiKey;
          this.#generation++;
          this.#failedLogin.succeeded();
        },
        (err: unknown) => {
          this.#failedLogin.failed(err);
          throw err;
        },
      )
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }
}

// ── A failed login, shared for a while ──
// A failure every request of a source shares, kept for a short while so that its other requests
// fail at once with it:
// - a login that failed for a reason every list shares: the host cannot be reached (refused, not
//   resolved, reset, a connect timeout), its certificate is not trusted, or the service refused the
//   email and password. Otherwise each list would log in again once the one before it had given
//   up, each with its own retries, and a run against an unreachable host would take a login and a
//   round of retry warnings per list before it failed;
// - a request that gave up on the host with a token in hand (a worker whose host went away between
//   runs): each list retried on its own, one lane after another.

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
