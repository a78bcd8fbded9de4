import { X509Certificate } from 'node:crypto';

/** Extra CA PEMs as given (none, one, or several) as a list. */
export function pemList(ca: string | string[] | undefined): string[] {
  if (ca === undefined) return [];
  return Array.isArray(ca) ? ca : [ca];
}

const certificateBlock = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Why a PEM's certificate blocks do not all parse (OpenSSL's code, e.g. ERR_OSSL_ASN1_WRONG_TAG),
 * or undefined when each does. Node's TLS context skips a broken CA without a word, so without this
 * a damaged CA file would surface only as "certificate not trusted" at the first request.
 */
export function certificateProblem(pem: string): string | undefined {
  const blocks = pem.match(certificateBlock) ?? [];
  if (blocks.length === 0) return 'no complete certificate block';
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code ?? 'unreadable';
    }
  }
  return undefined;
}
