// Certificates generated at start: a throwaway CA and a server certificate it signs, for
// `localhost`, `127.0.0.1` and `::1`. EC P-256 keys from node:crypto; the certificates are built
// with the small DER encoder beside this file (no dependency, and no global polyfill that the
// certificate libraries need). Nothing here is ever written to the repository.
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitString,
  boolean,
  explicit,
  implicit,
  integer,
  octetString,
  oid,
  sequence,
  set,
  time,
  utf8String,
} from './der.ts';

export interface SandboxCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

const DAY = 24 * 60 * 60 * 1000;

function name(commonName: string): Buffer {
  return sequence(
    set(sequence(oid(OID.organization), utf8String('refsync sandbox'))),
    set(sequence(oid(OID.commonName), utf8String(commonName))),
  );
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? sequence(oid(id), boolean(true), octetString(value)) : sequence(oid(id), octetString(value));
}

function spki(publicKey: KeyObject): Buffer {
  return publicKey.export({ type: 'spki', format: 'der' });
}

/** RFC 5280 key identifier: SHA-1 of the subjectPublicKey bits (the last 65 bytes of a P-256 SPKI). */
function keyId(publicKey: KeyObject): Buffer {
  const der = spki(publicKey);
  return createHash('sha1').update(der.subarray(der.length - 65)).digest();
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  // IPv6: expand '::' and write 8 groups of 16 bits.
  const [head = '', tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

interface CertificateRequest {
  subject: string;
  subjectKey: KeyObject;
  issuer: string;
  issuerKey: KeyObject; // private
  issuerPublicKey: KeyObject;
  days: number;
  ca: boolean;
  hosts?: string[];
}

function buildCertificate(req: CertificateRequest): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const now = Date.now();
  const extensions: Buffer[] = [];
  if (req.ca) {
    extensions.push(extension(OID.basicConstraints, true, sequence(boolean(true), integer(0))));
    // keyCertSign (bit 5) and cRLSign (bit 6): 0b00000110, one unused bit.
    extensions.push(extension(OID.keyUsage, true, bitString(Buffer.from([0x06]), 1)));
  } else {
    extensions.push(extension(OID.basicConstraints, true, sequence()));
    // digitalSignature (bit 0): 0b10000000, seven unused bits.
    extensions.push(extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)));
    extensions.push(extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth))));
    const names = (req.hosts ?? []).map((h) => (isIP(h) ? implicit(7, ipBytes(h)) : implicit(2, Buffer.from(h, 'ascii'))));
    extensions.push(extension(OID.subjectAltName, false, sequence(...names)));
  }
  extensions.push(extension(OID.subjectKeyIdentifier, false, octetString(keyId(req.subjectKey))));
  extensions.push(extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, keyId(req.issuerPublicKey)))));

  const tbs = sequence(
    explicit(0, integer(2)), // v3
    integer(serial),
    algorithm,
    name(req.issuer),
    sequence(time(new Date(now - 60 * 60 * 1000)), time(new Date(now + req.days * DAY))),
    name(req.subject),
    spki(req.subjectKey),
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, req.issuerKey); // DER-encoded ECDSA signature
  const der = sequence(tbs, algorithm, bitString(signature));
  const base64 = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`;
}

/** A fresh CA and a server certificate for the given hosts (default localhost, 127.0.0.1, ::1). */
export function generateCertificates(hosts: string[] = ['localhost', '127.0.0.1', '::1']): SandboxCertificates {
  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const server = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caPem = buildCertificate({
    subject: 'refsync sandbox CA',
    subjectKey: ca.publicKey,
    issuer: 'refsync sandbox CA',
    issuerKey: ca.privateKey,
    issuerPublicKey: ca.publicKey,
    days: 30,
    ca: true,
  });
  const certPem = buildCertificate({
    subject: hosts[0] ?? 'localhost',
    subjectKey: server.publicKey,
    issuer: 'refsync sandbox CA',
    issuerKey: ca.privateKey,
    issuerPublicKey: createPublicKey(ca.privateKey),
    days: 30,
    ca: false,
    hosts,
  });
  const keyPem = server.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { caPem, certPem, keyPem };
}
