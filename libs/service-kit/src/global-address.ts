import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Whether an address is one the platform may send a request to on a caller's say-so (a webhook URL): only global
// unicast addresses, judged as the network routes them. The range table is ipaddr.js's (decision D72), which
// follows the IANA IPv4 and IPv6 special-purpose address registries; what it lacks is added below, each with why.

/** The range name answered for an address that may be reached. */
export const GLOBAL_UNICAST = 'unicast';

/** The NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): always /96, the IPv4 address in its last 32 bits. */
const NAT64_WELL_KNOWN: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96];

/** IPv6 ranges ipaddr.js 2.5 calls `unicast` that are not global unicast. */
const MORE_IPV6: Record<string, [ipaddr.IPv6, number]> = {
  // IPv4-compatible addresses (RFC 4291 2.5.5.1, deprecated): `[::127.0.0.1]` is `::7f00:1`, which ipaddr.js calls
  // unicast; no global route leads there, and some stacks translate them to the IPv4 address.
  ipv4Compatible: [ipaddr.IPv6.parse('::'), 96],
  // The dummy IPv6 prefix of the IANA special-purpose registry (RFC 9780), newer than ipaddr.js's table.
  dummyPrefix: [ipaddr.IPv6.parse('100:0:0:1::'), 64],
};
/** Global unicast IPv6 is 2000::/3 (IANA IPv6 address space registry); everything else is reserved by the IETF. */
const IPV6_GLOBAL_UNICAST: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];

/** Readable names of the ranges, for error messages. */
const LABELS: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local',
  loopback: 'a loopback',
  carrierGradeNat: 'a shared (carrier-grade NAT)',
  private: 'a private',
  reserved: 'a reserved or documentation',
  benchmarking: 'a benchmarking',
  as112: 'an AS112',
  as112v6: 'an AS112',
  amt: 'an AMT',
  uniqueLocal: 'a unique-local',
  deprecatedSiteLocal: 'a site-local',
  discard: 'a discard-only',
  rfc6145: 'an IPv4-translated',
  rfc6052: 'a NAT64 local-use',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
  deprecatedOrchid: 'an ORCHID',
  orchid2: 'an ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID',
  segmentRouting: 'a segment-routing',
  ipv4Compatible: 'an IPv4-compatible',
  dummyPrefix: 'a dummy-prefix',
  notGlobalUnicast: 'an unallocated',
};

/**
 * Parses an address as the socket layer reads it: dotted-quad IPv4 or IPv6 (in brackets or not, with or without a
 * zone); anything else (`127.1`, `0x7f.1`: spellings only a URL parser or inet_aton reads) is no address here.
 */
function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const version = isIP(bare);
  if (version === 4) return ipaddr.IPv4.parse(bare);
  if (version !== 6) return undefined;
  // The WHATWG URL parser writes it in hexadecimal first: ipaddr.js reads a dotted tail after `::` (`::8.8.8.8`,
  // IPv4-compatible) as IPv4-mapped `::ffff:8.8.8.8`, which would judge it by the IPv4 address.
  return ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
}

function ipv4Range(ip: ipaddr.IPv4): string {
  // ipaddr.js 2.5's IPv4 table holds every entry of the IANA IPv4 special-purpose registry, and multicast and the
  // reserved 240.0.0.0/4 besides: nothing to add.
  return ip.range();
}

/**
 * The special-purpose range an address belongs to, or `unicast` ({@link GLOBAL_UNICAST}) for a global unicast one.
 * IPv4-mapped IPv6 (`::ffff:a.b.c.d`, however spelled) and the NAT64 well-known prefix (`64:ff9b::a.b.c.d`) are
 * judged by the IPv4 address they carry, which is where the packets go; every other IPv4-embedding form (local-use
 * NAT64 `64:ff9b:1::/48`, whose embedding the operator chooses, 6to4, Teredo, IPv4-translated, IPv4-compatible) is
 * refused outright. `notAnAddress` for text that is not an IP address.
 */
export function addressRange(address: string): string {
  const ip = parse(address);
  if (!ip) return 'notAnAddress';
  if (ip.kind() === 'ipv4') return ipv4Range(ip as ipaddr.IPv4);
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress() || v6.match(NAT64_WELL_KNOWN)) return ipv4Range(new ipaddr.IPv4(v6.toByteArray().slice(12)));
  const range = v6.range();
  if (range !== GLOBAL_UNICAST) return range;
  for (const [name, cidr] of Object.entries(MORE_IPV6)) if (v6.match(cidr)) return name;
  return v6.match(IPV6_GLOBAL_UNICAST) ? GLOBAL_UNICAST : 'notGlobalUnicast';
}

/** Whether an address is global unicast (see {@link addressRange}). */
export function isGlobalUnicast(address: string): boolean {
  return addressRange(address) === GLOBAL_UNICAST;
}

/** Why an address may not be reached, for a message: "127.0.0.1 is a loopback address"; undefined when it may. */
export function nonGlobalReason(address: string): string | undefined {
  const range = addressRange(address);
  if (range === GLOBAL_UNICAST) return undefined;
  if (range === 'notAnAddress') return `${address} is not an IP address`;
  return `${address} is ${LABELS[range] ?? `a special-purpose (${range})`} address`;
}
