// The webhook guard classifies by ipaddr.js's ranges, and every IPv6 form that
// carries an IPv4 address is judged by the address it reaches. Each private IPv4 target below is
// written in every such form; the guard refuses each, and lets the same forms of a public one pass
// (but the deprecated IPv4-compatible form, which no real endpoint uses). allowedAddresses is what
// the webhook's DNS lookup runs through before it connects.
import { describe, expect, it } from 'vitest';
import { restrictedReason } from '../../src/alerts/address.ts';
import { allowedAddresses, RestrictedAddressError } from '../../src/alerts/transport.ts';

/** The IPv4 address as two 16-bit hex groups. */
function groups(ipv4: string): [string, string] {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
const inverted = (group: string) => (parseInt(group, 16) ^ 0xffff).toString(16);

/** Every IPv6 spelling of an IPv4 address that leads to it, with the form's name. */
function embeddings(ipv4: string): Array<[string, string]> {
  const [high, low] = groups(ipv4);
  return [
    ['IPv4-mapped, dotted', `::ffff:${ipv4}`],
    ['IPv4-mapped, hex', `::ffff:${high}:${low}`],
    ['IPv4-mapped, bracketed', `[::ffff:${ipv4}]`],
    ['IPv4-translated (RFC 6145)', `::ffff:0:${ipv4}`],
    ['IPv4-compatible, dotted', `::${ipv4}`],
    ['IPv4-compatible, hex', `::${high}:${low}`],
    ['NAT64 64:ff9b::/96, dotted', `64:ff9b::${ipv4}`],
    ['NAT64 64:ff9b::/96, hex', `64:ff9b::${high}:${low}`],
    ['6to4 2002::/16', `2002:${high}:${low}::1`],
    ['Teredo 2001::/32', `2001:0:4136:e378:8000:63bf:${inverted(high)}:${inverted(low)}`],
  ];
}

const privateTargets: Array<[string, string]> = [
  ['10.0.0.1', 'private'],
  ['172.16.5.4', 'private'],
  ['192.168.1.1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['169.254.169.254', 'link-local'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['0.0.0.0', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['198.18.0.1', 'reserved'],
];

describe('IPv6 forms carrying a private IPv4 address are refused as that address', () => {
  const table = privateTargets.flatMap(([ipv4, reason]) => embeddings(ipv4).map(([form, address]) => [ipv4, form, address, reason] as const));
  it.each(table)('%s as %s (%s): %s', (_ipv4, _form, address, reason) => {
    expect(restrictedReason(address)).toMatch(new RegExp(`^${reason}\\b`));
    expect(() => allowedAddresses('hook.example', [address], false)).toThrow(RestrictedAddressError);
    expect(allowedAddresses('hook.example', [address], true)).toEqual([address]);
  });

  it('the refusal names the IPv4 address and the form', () => {
    expect(restrictedReason('64:ff9b::a9fe:a9fe')).toBe('link-local (169.254.169.254 via NAT64)');
    expect(restrictedReason('2002:a00:1::1')).toBe('private (10.0.0.1 via 6to4)');
    expect(restrictedReason('::ffff:7f00:1')).toBe('loopback');
    expect(restrictedReason('::a00:1')).toBe('private (10.0.0.1, IPv4-compatible)');
  });
});

describe('the same forms of a public IPv4 address', () => {
  const publicForms = embeddings('8.8.8.8').filter(([form]) => !form.startsWith('IPv4-compatible'));
  it.each(publicForms)('%s (%s) is public', (_form, address) => {
    expect(restrictedReason(address)).toBeNull();
  });
  it.each(embeddings('8.8.8.8').filter(([form]) => form.startsWith('IPv4-compatible')))('%s (%s) is refused all the same (deprecated)', (_form, address) => {
    expect(restrictedReason(address)).toBe('reserved (8.8.8.8, IPv4-compatible)');
  });
});

describe('the ranges of ipaddr.js', () => {
  it.each([
    ['64:ff9b:1::a00:1', 'private'], // local-use NAT64 (RFC 8215), whatever it carries
    ['64:ff9b:1::808:808', 'private'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'], // documentation
    ['100::1', 'reserved'], // discard-only
    ['192.0.2.1', 'reserved'], // TEST-NET-1
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['hook.example', 'not an IP address'],
    ['127.1', 'not an IP address'], // a shorthand node:net does not take as an address
  ])('%s is %s', (address, reason) => {
    expect(restrictedReason(address)).toBe(reason);
  });

  it.each([['8.8.8.8'], ['1.1.1.1'], ['172.32.0.1'], ['100.128.0.1'], ['2606:4700:4700::1111'], ['2a00:1450:4001:81b::200e']])('%s is public', (address) => {
    expect(restrictedReason(address)).toBeNull();
  });

  it('a name resolving to public and private addresses keeps only the public ones', () => {
    expect(allowedAddresses('hook.example', ['64:ff9b::a00:1', '8.8.8.8', '::ffff:127.0.0.1'], false)).toEqual(['8.8.8.8']);
  });
});
