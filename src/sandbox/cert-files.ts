// The sandbox's certificates kept in a folder (`refsync sandbox`'s ./.refsync/sandbox, or --cert-dir):
// a restart serves the same certificate, so the CA file every client was pointed at stays the one
// to trust, and a running worker keeps connecting. New ones are made when the folder has none, when
// the host names changed, or when the certificate has less than a day left.
import { X509Certificate } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateCertificates, type SandboxCertificates } from './certificates.ts';

const DAY = 24 * 60 * 60 * 1000;

const files = { caPem: 'sandbox-ca.pem', certPem: 'sandbox-cert.pem', keyPem: 'sandbox-key.pem', hosts: 'sandbox-hosts.txt' } as const;

/** The path of the CA PEM clients trust, in a sandbox folder. */
export const caFileIn = (dir: string) => join(dir, files.caPem);

async function kept(dir: string, hosts: string[]): Promise<SandboxCertificates | null> {
  try {
    const [caPem, certPem, keyPem, names] = await Promise.all(
      [files.caPem, files.certPem, files.keyPem, files.hosts].map((f) => readFile(join(dir, f), 'utf8')),
    );
    if (names !== hosts.join('\n')) return null;
    if (new Date(new X509Certificate(certPem!).validTo).getTime() - Date.now() < DAY) return null;
    return { caPem: caPem!, certPem: certPem!, keyPem: keyPem! };
  } catch {
    return null;
  }
}

/**
 * Writes a file readable by its owner only. writeFile's mode applies only to a file it creates: one
 * an older sandbox (or a user) left with a looser mode keeps it, so the mode is set after writing.
 */
export async function ownerOnly(file: string, text: string): Promise<void> {
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600);
}

/** The certificates kept in `dir` for these host names, else new ones written there. */
export async function certificatesIn(dir: string, hosts: string[]): Promise<SandboxCertificates> {
  const found = await kept(dir, hosts);
  if (found) return found;
  const certs = await generateCertificates(hosts);
  await mkdir(dir, { recursive: true });
  await ownerOnly(join(dir, files.keyPem), certs.keyPem);
  await ownerOnly(join(dir, files.certPem), certs.certPem);
  await ownerOnly(caFileIn(dir), certs.caPem);
  await ownerOnly(join(dir, files.hosts), hosts.join('\n'));
  return certs;
}
