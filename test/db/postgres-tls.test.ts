// TLS to Postgres as managed services require it: a private server (never the shared one) with a
// throwaway CA and a certificate for `localhost` only, made at test time; refsync connects with
// libpq's sslmode meanings and the CA from PGSSLROOTCERT or sslrootcert=.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyOut } from '../../src/db/copy-out.ts';
import { openDatabase } from '../../src/db/database.ts';
import { generateCertificates } from '../../src/sandbox/certificates.ts';
import { canStartPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../faults/servers.ts';
import { runCli } from '../helpers/cli.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

if (!canStartPrivatePostgres)
  console.warn('[tests] skipping test/db/postgres-tls.test.ts: needs root and /usr/lib/postgresql/15/bin to start a private Postgres');

let server: PrivatePostgres;
let caFile: string;
let otherCaFile: string;

beforeAll(async () => {
  if (!canStartPrivatePostgres) return;
  const certs = await generateCertificates(['localhost']);
  const dir = testTempDir('refsync-pg-tls');
  caFile = join(dir, 'ca.pem');
  otherCaFile = join(dir, 'other-ca.pem');
  writeFileSync(caFile, certs.caPem);
  writeFileSync(otherCaFile, (await generateCertificates(['localhost'])).caPem);
  server = await startPrivatePostgres({ tls: { certPem: certs.certPem, keyPem: certs.keyPem } });
}, 120_000);

const urlFor = (host: string, query: string) => `postgres://postgres@${host}:${server.port}/refsync?${query}`;

async function sslInUse(url: string, env: Record<string, string> = {}): Promise<boolean> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const db = await openDatabase({ url, poolSize: 1 });
    try {
      const { rows } = await db.query<{ ssl: boolean }>('select ssl from pg_stat_ssl where pid = pg_backend_pid()');
      return rows[0]!.ssl;
    } finally {
      await db.close();
    }
  } finally {
    for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
  }
}

describe.skipIf(!canStartPrivatePostgres)('TLS to Postgres', () => {
  it('sslmode=require encrypts without checking the certificate; refsync migrate works over it', async () => {
    const url = urlFor('127.0.0.1', 'sslmode=require');
    expect(await sslInUse(url)).toBe(true);
    const migrate = await runCli(['migrate'], { env: { DATABASE_URL: url } });
    expect(migrate.code, migrate.stderr).toBe(0);
  });

  it('sslmode=verify-full checks the chain and the host name, with the CA from PGSSLROOTCERT or sslrootcert=', async () => {
    expect(await sslInUse(urlFor('localhost', 'sslmode=verify-full'), { PGSSLROOTCERT: caFile })).toBe(true);
    expect(await sslInUse(urlFor('localhost', `sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`))).toBe(true);
    const migrate = await runCli(['migrate'], { env: { DATABASE_URL: urlFor('localhost', 'sslmode=verify-full'), PGSSLROOTCERT: caFile } });
    expect(migrate.code, migrate.stderr).toBe(0);
    // verify-ca checks the chain only: the certificate names localhost, not 127.0.0.1.
    expect(await sslInUse(urlFor('127.0.0.1', 'sslmode=verify-ca'), { PGSSLROOTCERT: caFile })).toBe(true);
  });

  it('a COPY out is read off the TLS socket whole, and the connection goes on', async () => {
    // copyOut (the current-row index) takes the socket's data from node-postgres: here a TLS socket.
    const db = await openDatabase({ url: urlFor('127.0.0.1', 'sslmode=require'), poolSize: 1 });
    try {
      const rows = await db.withConnection(async (conn) => {
        const got: string[] = [];
        await copyOut(conn, `copy (select x, repeat('t', 200) from generate_series(1, 20000) x) to stdout`, (buf, start, end) =>
          got.push(buf.toString('utf8', start, end)),
        );
        const { rows: after } = await conn.query<{ ssl: boolean }>('select ssl from pg_stat_ssl where pid = pg_backend_pid()');
        return { got, ssl: after[0]!.ssl };
      });
      expect(rows.ssl).toBe(true);
      expect(rows.got).toHaveLength(20_000);
      expect(rows.got[19_999]).toBe(`20000\t${'t'.repeat(200)}\n`);
    } finally {
      await db.close();
    }
  });

  it('a wrong CA, or a host the certificate does not name, fails with one line naming the setting', async () => {
    const wrongCa = await runCli(['migrate'], { env: { DATABASE_URL: urlFor('localhost', 'sslmode=verify-full'), PGSSLROOTCERT: otherCaFile } });
    expect(wrongCa.code).toBe(1);
    expect(wrongCa.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrongCa.stderr).toMatch(
      /^refsync: cannot reach the database: the Postgres server's TLS certificate is not signed by a trusted CA \(\w+\); set PGSSLROOTCERT/,
    );

    const wrongHost = await runCli(['migrate'], { env: { DATABASE_URL: urlFor('127.0.0.1', 'sslmode=verify-full'), PGSSLROOTCERT: caFile } });
    expect(wrongHost.code).toBe(1);
    expect(wrongHost.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrongHost.stderr).toMatch(/TLS certificate does not name this host \(ERR_TLS_CERT_ALTNAME_INVALID\)/);

    const missing = await runCli(['migrate'], { env: { DATABASE_URL: urlFor('localhost', 'sslmode=verify-full'), PGSSLROOTCERT: '/nonexistent/ca.pem' } });
    expect(missing.stderr.trim()).toMatch(/^refsync: PGSSLROOTCERT: cannot read '\/nonexistent\/ca\.pem' \(ENOENT\)$/);
  });
});
