import { AuthError } from './errors.ts';
import { FailedLogin } from './failed-login.ts';

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
 * would meet again (failed-login.ts), the API key (configured, or the `api_key` of the login
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
