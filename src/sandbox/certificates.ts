// Certificates generated at start: a throwaway CA and a server certificate it signs, for
// `localhost`, `127.0.0.1` and `::1`, with EC P-256 keys. Built by @peculiar/x509 (a well-kept
// X.509 library on WebCrypto) instead of hand-written DER. Its dependency container needs the
// reflect-metadata polyfill on the global Reflect: both are loaded here, on the first call, so only
// a process that makes sandbox certificates carries them. Keys and signatures come from Node's
// WebCrypto (globalThis.crypto), which the library finds by itself. Nothing here is written to the
// repository.
import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';

export interface SandboxCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const DAY = 24 * 60 * 60 * 1000;
const VALID_DAYS = 30;
const ecdsa = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

async function library() {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  return x509;
}

/** A positive 128-bit serial, hex (RFC 5280: positive, at most 20 octets). */
function serialNumber(): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  return serial.toString('hex');
}

/** A fresh CA and a server certificate for the given hosts (default localhost, 127.0.0.1, ::1). */
export async function generateCertificates(hosts: string[] = ['localhost', '127.0.0.1', '::1']): Promise<SandboxCertificates> {
  const x509 = await library();
  const { KeyUsageFlags: usage } = x509;
  const newKeys = () => webcrypto.subtle.generateKey(ecdsa, true, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>;
  const [caKeys, serverKeys] = await Promise.all([newKeys(), newKeys()]);
  // An hour back, so a client whose clock is a little behind still accepts a certificate made just now.
  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(Date.now() + VALID_DAYS * DAY);

  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'O=refsync sandbox, CN=refsync sandbox CA',
    notBefore,
    notAfter,
    signingAlgorithm: ecdsa,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(usage.keyCertSign | usage.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const server = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `O=refsync sandbox, CN=${hosts[0] ?? 'localhost'}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ecdsa,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(usage.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h }))),
      await x509.SubjectKeyIdentifierExtension.create(serverKeys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', serverKeys.privateKey);
  return {
    caPem: `${ca.toString('pem')}\n`,
    certPem: `${server.toString('pem')}\n`,
    keyPem: `${x509.PemConverter.encode(pkcs8, 'PRIVATE KEY')}\n`,
  };
}
