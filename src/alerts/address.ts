import { BlockList, isIP } from 'node:net';

/**
 * Address ranges a webhook may not reach unless the source allows private targets (SSRF guard):
 * loopback, private, link-local, unspecified, CGNAT, multicast and reserved space. BlockList also
 * matches IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) against the IPv4 rules.
 */
const ranges: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  // IPv4-compatible addresses (deprecated) would otherwise smuggle any IPv4 target.
  ['::', 96, 'ipv6', 'reserved'],
  ['64:ff9b:1::', 48, 'ipv6', 'private'],
  ['fc00::', 7, 'ipv6', 'private'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'private'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = ranges.map(([network, prefix, family, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, reason };
});

/** Why an IP address is not a public one ('loopback', 'private', ...), or null when it is public. */
export function restrictedReason(address: string): string | null {
  const ip = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { list, reason } of lists) if (list.check(ip, type)) return reason;
  return null;
}
