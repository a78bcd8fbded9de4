import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so that two entries equal in content serialise to the
 * same bytes whatever key order the service used.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  const parts = keys.map(
    (k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`,
  );
  return `{${parts.join(',')}}`;
}

/** sha-256 of the canonical entry, base64: the entry's identity of content. */
export function entryDigest(canonical: string): string {
  return createHash('sha256').update(canonical).digest('base64');
}
