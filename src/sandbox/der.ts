// A minimal DER (ASN.1) encoder: just enough to build X.509 certificates for the sandbox.
// Each function returns the full TLV bytes of one element.

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), encodeLength(body.length), body]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
export const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
export const octetString = (bytes: Buffer): Buffer => tlv(0x04, bytes);
export const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
export const boolean = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
/** Context-specific constructed tag [n] (EXPLICIT wrapping). */
export const explicit = (n: number, ...items: Buffer[]): Buffer => tlv(0xa0 | n, ...items);
/** Context-specific primitive tag [n] (IMPLICIT, primitive content). */
export const implicit = (n: number, bytes: Buffer): Buffer => tlv(0x80 | n, bytes);

/** A BIT STRING with `unusedBits` padding bits in its last byte. */
export function bitString(bytes: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.from([unusedBits]), bytes);
}

/** A non-negative INTEGER from big-endian magnitude bytes. */
export function integer(magnitude: Buffer | number): Buffer {
  let bytes = typeof magnitude === 'number' ? Buffer.from([magnitude]) : magnitude;
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  bytes = bytes.subarray(start);
  if ((bytes[0] ?? 0) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(0x02, bytes);
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const [a = 0, b = 0, ...rest] = parts;
  const out: number[] = [40 * a + b];
  for (const part of rest) {
    const chunk: number[] = [part & 0x7f];
    for (let n = Math.floor(part / 128); n > 0; n = Math.floor(n / 128)) chunk.unshift((n & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime for years 1950-2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // 2025-01-02T03:04:05.678Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = date.getUTCFullYear();
  return year < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}
