// TLS to Postgres with libpq's meaning of sslmode, which managed services document: `require`
// encrypts without checking the certificate (unless a CA is given, then it checks the chain),
// `verify-ca` checks the chain, `verify-full` the chain and the host name. node-postgres's own
// parser treats require as verify-full and reads sslrootcert itself, so these are taken out of the
// URL and turned into the driver's ssl options here. The CA comes from `sslrootcert=` in the URL
// or PGSSLROOTCERT, as for psql; sslmode from the URL or PGSSLMODE.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { ConfigError } from '../config/errors.ts';

export interface PostgresTls {
  /** The URL without the TLS parameters handled here. */
  connectionString: string;
  /** The driver's ssl option; undefined leaves the URL's own handling (no sslmode, or allow/prefer). */
  ssl?: ConnectionOptions | false;
}

const HANDLED = new Set(['disable', 'require', 'verify-ca', 'verify-full']);

function readCa(path: string, setting: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${setting}: cannot read '${path}' (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

export function postgresTls(url: string, env: Record<string, string | undefined> = process.env): PostgresTls {
  const parsed = new URL(url);
  const mode = parsed.searchParams.get('sslmode') ?? env.PGSSLMODE;
  if (!mode || !HANDLED.has(mode)) return { connectionString: url };
  const rootCert = parsed.searchParams.get('sslrootcert');
  for (const key of ['sslmode', 'sslrootcert', 'uselibpqcompat']) parsed.searchParams.delete(key);
  const connectionString = parsed.toString();
  if (mode === 'disable') return { connectionString, ssl: false };
  const ca = rootCert ? readCa(rootCert, 'DATABASE_URL sslrootcert') : env.PGSSLROOTCERT ? readCa(env.PGSSLROOTCERT, 'PGSSLROOTCERT') : undefined;
  if (mode === 'verify-full') return { connectionString, ssl: ca ? { ca } : {} };
  if (mode === 'require' && !ca) return { connectionString, ssl: { rejectUnauthorized: false } };
  // verify-ca, and require with a CA (as libpq does): the chain is checked, the host name is not.
  return { connectionString, ssl: { ...(ca ? { ca } : {}), checkServerIdentity: () => undefined } };
}

/** Node's codes for a server certificate that could not be verified. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A connection error as one line, naming the setting to fix when the server's certificate was not trusted. */
export function describeConnectError(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const message = String(e?.message ?? err).split('\n')[0] ?? '';
  if (e?.code && UNTRUSTED.has(e.code)) {
    const what = e.code === 'ERR_TLS_CERT_ALTNAME_INVALID' ? 'does not name this host' : 'is not signed by a trusted CA';
    return `the Postgres server's TLS certificate ${what} (${e.code}); set PGSSLROOTCERT (or sslrootcert= in DATABASE_URL) to the CA that signed it, and connect by a name the certificate holds`;
  }
  return message;
}
