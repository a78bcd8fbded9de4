import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { generateCertificates } from '../../src/sandbox/index.ts';
import { sandboxRequest, useSandbox } from '../helpers/sandbox.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

describe('sandbox certificates and HTTPS', () => {
  it('generates a CA and a server certificate for localhost, 127.0.0.1 and ::1', async () => {
    const certs = await generateCertificates();
    const ca = new X509Certificate(certs.caPem);
    const leaf = new X509Certificate(certs.certPem);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkHost('localhost')).toBe('localhost');
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkIP('::1')).toBe('::1');
    expect(new Date(leaf.validTo).getTime()).toBeGreaterThan(Date.now());
    expect(certs.keyPem).toContain('PRIVATE KEY');
  });

  it('gives the CA and the server certificate the constraints, key usages, names and validity TLS clients check', async () => {
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    const certs = await generateCertificates();
    const ca = new x509.X509Certificate(certs.caPem);
    const leaf = new x509.X509Certificate(certs.certPem);
    const { KeyUsageFlags: usage } = x509;

    const caConstraints = ca.getExtension(x509.BasicConstraintsExtension)!;
    expect(caConstraints).toMatchObject({ ca: true, pathLength: 0, critical: true });
    const caUsage = ca.getExtension(x509.KeyUsagesExtension)!;
    expect(caUsage.critical).toBe(true);
    expect(caUsage.usages).toBe(usage.keyCertSign | usage.cRLSign);

    expect(leaf.getExtension(x509.BasicConstraintsExtension)).toMatchObject({ ca: false, critical: true });
    expect(leaf.getExtension(x509.KeyUsagesExtension)!.usages).toBe(usage.digitalSignature);
    expect(leaf.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth]);
    const names = leaf.getExtension(x509.SubjectAlternativeNameExtension)!.names.toJSON();
    expect(names).toEqual(
      expect.arrayContaining([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
      ]),
    );
    expect(leaf.issuer).toBe(ca.subject);
    expect(await leaf.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);

    const now = Date.now();
    for (const cert of [ca, leaf]) {
      expect(cert.notBefore.getTime()).toBeLessThanOrEqual(now);
      expect(cert.notAfter.getTime()).toBeGreaterThan(now + 7 * 24 * 3600 * 1000);
      expect(cert.notAfter.getTime()).toBeLessThanOrEqual(now + 31 * 24 * 3600 * 1000);
    }
  });

  it("is accepted by Node's TLS client with the CA file it writes, and refused without it", async () => {
    const sb = await useSandbox();
    const handshake = (options: tls.ConnectionOptions) =>
      new Promise<string>((resolve) => {
        const socket = tls.connect({ host: '127.0.0.1', port: sb.port, servername: 'localhost', ...options }, () => {
          resolve(socket.authorized ? 'authorized' : `unauthorized ${String(socket.authorizationError)}`);
          socket.end();
        });
        socket.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`));
      });
    expect(await handshake({ ca: readFileSync(sb.caFile, 'utf8') })).toBe('authorized');
    expect(await handshake({})).toMatch(/^error (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)$/);
  });

  it('names extra hosts in its certificate and writes the CA into a given folder (compose)', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'refsync-ca-')), 'nested');
    try {
      const sb = await useSandbox({ hostnames: ['sandbox'], certDir: dir });
      expect(sb.caFile).toBe(join(dir, 'sandbox-ca.pem'));
      // A client that trusts the CA accepts the server when it asks for the name 'sandbox'.
      const agent = new Agent({ connect: { ca: sb.caPem, servername: 'sandbox' } });
      try {
        const res = await request(`${sb.url}/v2/auth/me/`, { dispatcher: agent });
        expect(res.statusCode).toBe(401);
        await res.body.text();
      } finally {
        await agent.close();
      }
      await sb.close();
      expect(existsSync(sb.caFile), 'a given folder is left alone').toBe(true);
    } finally {
      rmSync(dirname(dir), { recursive: true, force: true });
    }
  });

  it('writes the CA PEM to the file it names and serves HTTPS with it', async () => {
    const sb = await useSandbox();
    expect(sb.url).toBe(`https://127.0.0.1:${sb.port}`);
    expect(readFileSync(sb.caFile, 'utf8')).toBe(sb.caPem);
    const res = await sandboxRequest(sb, '/v2/auth/me/');
    expect(res.status).toBe(401);
  });

  it('is trusted by name too (localhost), with node:https', async () => {
    const sb = await useSandbox();
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get({ host: 'localhost', port: sb.port, path: '/v2/auth/me/', ca: sb.caPem }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });
    expect(status).toBe(401);
  });

  it('refuses a client that does not trust the CA', async () => {
    const sb = await useSandbox();
    const agent = new Agent();
    await expect(request(`${sb.url}/v2/auth/me/`, { dispatcher: agent })).rejects.toThrow(/certificate|self.signed|issuer/i);
    await agent.close();
  });

  it('fails a plain-HTTP request to its port', async () => {
    const sb = await useSandbox();
    const outcome = await new Promise<string>((resolve) => {
      http
        .get({ host: '127.0.0.1', port: sb.port, path: '/v2/auth/me/' }, (res) => {
          res.resume();
          resolve(`status ${res.statusCode}`);
        })
        .on('error', (err) => resolve(`error ${err.message}`));
    });
    expect(outcome).toMatch(/^error /);
  });

  it('uses a given certDir and keeps it on close', async () => {
    const dir = testTempDir('refsync-sandbox-certdir');
    const sb = await useSandbox({ hostnames: ['sandbox'], certDir: dir });
    expect(sb.caFile.startsWith(dir)).toBe(true);
    await sb.close();
    await sb.close(); // idempotent
    expect(existsSync(sb.caFile)).toBe(true);
  });
});
