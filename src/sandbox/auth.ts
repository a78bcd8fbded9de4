// Accounts, login and the four Authorization schemes: `Token <t>`, `APIkey <k>`, `Bearer <k>`, and
// HTTP Basic with the API key as username and an empty password. Tokens are random per login and
// may be given a lifetime (requests or seconds); some endpoints may refuse tokens (requireApiKey).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { SandboxAccount, TokenLifetime } from './types.ts';
import { SandboxError } from './types.ts';

/** The default machine user: no API key, like most accounts ("api_key usually null"). */
export const SANDBOX_MACHINE_ACCOUNT: SandboxAccount = {
  email: 'machine@sandbox.test',
  password: 'sandbox-password',
  userId: 4101,
  apiKey: null,
};

/** An account that also has an API key. */
export const SANDBOX_KEYED_ACCOUNT: SandboxAccount = {
  email: 'keyed@sandbox.test',
  password: 'keyed-password',
  userId: 4102,
  apiKey: 'sandbox-api-key-0001',
};

export const DEFAULT_ACCOUNTS: readonly SandboxAccount[] = [SANDBOX_MACHINE_ACCOUNT, SANDBOX_KEYED_ACCOUNT];

export type AuthScheme = 'token' | 'apikey' | 'bearer' | 'basic';

export type AuthResult =
  | { ok: true; account: SandboxAccount; scheme: AuthScheme }
  | { ok: false; scheme: AuthScheme | 'unknown' | null; reason: 'missing' | 'invalid' | 'expired' | 'token_refused' };

interface IssuedToken {
  account: SandboxAccount;
  issuedAt: number;
  uses: number;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The scheme of an Authorization header, for the request log (never the credential). */
export function schemeOf(header: string | undefined): AuthScheme | 'unknown' | null {
  if (!header) return null;
  const keyword = header.trim().split(/\s+/, 1)[0]?.toLowerCase();
  if (keyword === 'token' || keyword === 'apikey' || keyword === 'bearer' || keyword === 'basic') return keyword;
  return 'unknown';
}

export function publicUser(account: SandboxAccount): Record<string, unknown> {
  const local = account.email.split('@')[0] ?? 'user';
  return {
    id: account.userId,
    email: account.email,
    first_name: local.charAt(0).toUpperCase() + local.slice(1),
    last_name: 'Sandbox',
    is_active: true,
    company: { id: 77, name: 'Sandbox Freight Co' },
    permissions: ['shipments.view', 'shipments.add', 'reference_data.view', 'quoting.view'],
  };
}

export class AuthService {
  private accounts: SandboxAccount[];
  private tokens = new Map<string, IssuedToken>();
  private lifetime: TokenLifetime = {};
  private apiKeyOnly = new Set<string>();

  constructor(accounts: readonly SandboxAccount[]) {
    this.accounts = accounts.map((a) => ({ ...a }));
  }

  accountList(): SandboxAccount[] {
    return this.accounts.map((a) => ({ ...a }));
  }

  /** A fresh random token, or null when the e-mail and password do not match an account. */
  login(email: string, password: string): { token: string; account: SandboxAccount } | null {
    const account = this.accounts.find((a) => a.email.toLowerCase() === email.toLowerCase() && safeEqual(a.password, password));
    if (!account) return null;
    const token = randomBytes(20).toString('hex');
    this.tokens.set(token, { account, issuedAt: Date.now(), uses: 0 });
    return { token, account };
  }

  setTokenLifetime(lifetime: TokenLifetime): void {
    for (const k of ['requests', 'seconds'] as const) {
      const v = lifetime?.[k];
      if (v !== undefined && v !== null && !(typeof v === 'number' && v >= 0)) throw new SandboxError(`tokenLifetime.${k} must be a non-negative number`);
    }
    this.lifetime = {
      ...(typeof lifetime.requests === 'number' ? { requests: lifetime.requests } : {}),
      ...(typeof lifetime.seconds === 'number' ? { seconds: lifetime.seconds } : {}),
    };
  }

  tokenLifetime(): TokenLifetime {
    return { ...this.lifetime };
  }

  requireApiKey(paths: string[]): void {
    if (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string')) throw new SandboxError('paths must be an array of list keys or paths');
    this.apiKeyOnly = new Set(paths);
  }

  apiKeyOnlyPaths(): string[] {
    return [...this.apiKeyOnly];
  }

  reset(): void {
    this.lifetime = {};
    this.apiKeyOnly.clear();
  }

  private byApiKey(key: string): SandboxAccount | undefined {
    return key ? this.accounts.find((a) => a.apiKey !== null && safeEqual(a.apiKey, key)) : undefined;
  }

  /**
   * Checks an Authorization header for a request to `pathname` (list key `listKey`). A token use
   * counts toward its lifetime only when the request is otherwise accepted.
   */
  authenticate(header: string | undefined, pathname: string, listKey: string | null): AuthResult {
    const scheme = schemeOf(header);
    if (!header || scheme === null) return { ok: false, scheme: null, reason: 'missing' };
    const trimmed = header.trim();
    const space = trimmed.search(/\s/);
    const credential = space < 0 ? '' : trimmed.slice(space).trim();
    if (scheme === 'unknown' || credential === '') return { ok: false, scheme, reason: 'invalid' };

    if (scheme === 'token') {
      const issued = this.tokens.get(credential);
      if (!issued) return { ok: false, scheme, reason: 'invalid' };
      const { requests, seconds } = this.lifetime;
      const expired = (requests !== undefined && issued.uses >= requests) || (seconds !== undefined && Date.now() - issued.issuedAt >= seconds * 1000);
      if (expired) return { ok: false, scheme, reason: 'expired' };
      if (this.apiKeyOnly.has(pathname) || (listKey !== null && this.apiKeyOnly.has(listKey))) {
        return { ok: false, scheme, reason: 'token_refused' };
      }
      issued.uses++;
      return { ok: true, account: issued.account, scheme };
    }

    let key = credential;
    if (scheme === 'basic') {
      let decoded: string;
      try {
        decoded = Buffer.from(credential, 'base64').toString('utf8');
      } catch {
        return { ok: false, scheme, reason: 'invalid' };
      }
      const colon = decoded.indexOf(':');
      // Username = the API key; "no password is needed": an empty one is accepted, a non-empty one is not.
      if (colon < 0 || decoded.slice(colon + 1) !== '') return { ok: false, scheme, reason: 'invalid' };
      key = decoded.slice(0, colon);
    }
    const account = this.byApiKey(key);
    return account ? { ok: true, account, scheme } : { ok: false, scheme, reason: 'invalid' };
  }
}
