// The webhook SSRF guard: which addresses a webhook may not reach unless the source allows private
// targets. The special-purpose ranges come from ipaddr.js (kept with the IANA registries), not a
// hand-written list; what is added here is the one thing it leaves to its caller: IPv6 forms that
// carry an IPv4 address (IPv4-mapped and -translated, IPv4-compatible, NAT64, 6to4, Teredo) are
// judged by the IPv4 address they reach, so `64:ff9b::a9fe:a9fe` is the metadata service it is.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** How each special range of ipaddr.js reads in a refusal; any range not named is `reserved`. */
const reasons: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
};

function rangeReason(range: string): string | null {
  return range === 'unicast' ? null : (reasons[range] ?? 'reserved');
}

const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** The IPv4 address an IPv6 address leads to, and by which form, when it carries one. */
function embeddedIPv4(addr: ipaddr.IPv6): { v4: ipaddr.IPv4; form: string } | undefined {
  const p = addr.parts;
  switch (addr.range()) {
    case 'ipv4Mapped':
      return { v4: v4(p[6]!, p[7]!), form: 'IPv4-mapped' };
    case 'rfc6145':
      return { v4: v4(p[6]!, p[7]!), form: 'IPv4-translated' };
    case 'rfc6052':
      // 64:ff9b::/96, the well-known NAT64 prefix; 64:ff9b:1::/48 (local-use) is refused as private below.
      return p[2] === 0 ? { v4: v4(p[6]!, p[7]!), form: 'NAT64' } : undefined;
    case '6to4':
      return { v4: v4(p[1]!, p[2]!), form: '6to4' };
    case 'teredo':
      // The client's address, stored inverted (RFC 4380).
      return { v4: v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff), form: 'Teredo' };
    default:
      return undefined;
  }
}

/** ::a.b.c.d (deprecated, RFC 4291): the first 96 bits zero, but not :: and ::1. */
function isIPv4Compatible(addr: ipaddr.IPv6): boolean {
  const p = addr.parts;
  return p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1);
}

function ipv6Reason(addr: ipaddr.IPv6): string | null {
  if (isIPv4Compatible(addr)) {
    const inner = v4(addr.parts[6]!, addr.parts[7]!);
    return `${rangeReason(inner.range()) ?? 'reserved'} (${inner.toString()}, IPv4-compatible)`;
  }
  const embedded = embeddedIPv4(addr);
  if (embedded) {
    const inner = rangeReason(embedded.v4.range());
    if (inner === null) return null;
    // An IPv4-mapped address is that IPv4 address: the socket connects to it over IPv4.
    return embedded.form === 'IPv4-mapped' ? inner : `${inner} (${embedded.v4.toString()} via ${embedded.form})`;
  }
  if (addr.range() === 'rfc6052') return 'private';
  return rangeReason(addr.range());
}

/** Why an IP address is not a public one ('loopback', 'private', ...), or null when it is public. */
export function restrictedReason(address: string): string | null {
  const ip = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // node:net is strict about what an address is (ipaddr.js also takes 127.1 and hex octets).
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  if (family === 4) return rangeReason(ipaddr.IPv4.parse(ip).range());
  return ipv6Reason(ipaddr.IPv6.parse(canonicalIPv6(ip)));
}

/**
 * The address in the canonical hex form (RFC 5952, by the URL parser), zone dropped: ipaddr.js
 * reads a dotted tail as IPv4-mapped whatever precedes it (`::8.8.8.8` would pass as
 * `::ffff:8.8.8.8`), so it is given the form the socket would use.
 */
function canonicalIPv6(ip: string): string {
  return new URL(`http://[${ip.split('%')[0]}]/`).hostname.slice(1, -1);
}
