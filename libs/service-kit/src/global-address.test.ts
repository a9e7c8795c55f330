import { addressRange, isGlobalUnicast, nonGlobalReason } from './global-address';

// What a webhook may reach: global unicast addresses only, judged as the network routes them.

/** How a URL's host reaches the check: the WHATWG parser's hostname, as the webhooks read it. */
const hostOf = (url: string) => new URL(url).hostname;

describe('global unicast addresses', () => {
  it.each([
    // IPv4 special-purpose registry, and multicast, reserved and broadcast.
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['172.16.5.4', 'private'],
    ['192.0.0.1', 'reserved'],
    ['192.0.0.170', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['192.31.196.1', 'as112'],
    ['192.52.193.1', 'amt'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['192.175.48.1', 'as112'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.254', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // IPv6 special-purpose registry.
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard'],
    ['100:0:0:1::1', 'dummyPrefix'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['2001:3::1', 'amt'],
    ['2001:4:112::1', 'as112v6'],
    ['2620:4f:8000::1', 'as112v6'],
    ['2001:10::1', 'deprecatedOrchid'],
    ['2001:20::1', 'orchid2'],
    ['2001:30::1', 'droneRemoteIdProtocolEntityTags'],
    ['2001:1::1', 'reserved'],
    ['5f00::1', 'segmentRouting'],
    ['4000::1', 'notGlobalUnicast'],
    // IPv4 embedded in IPv6.
    ['::127.0.0.1', 'ipv4Compatible'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['::FFFF:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'linkLocal'],
    ['::ffff:c612:1', 'reserved'],
    ['::ffff:0:7f00:1', 'rfc6145'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b:1::808:808', 'rfc6052'],
    ['64:ff9b:1:ffff::1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
    ['2002:808:808::1', '6to4'],
    ['2001::1', 'teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    // Not an IP address as a socket reads one: refused rather than guessed at.
    ['127.1', 'notAnAddress'],
    ['0x7f.0.0.1', 'notAnAddress'],
    ['2130706433', 'notAnAddress'],
    ['example.com', 'notAnAddress'],
    ['', 'notAnAddress'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressRange(address)).toBe(range);
    expect(isGlobalUnicast(address)).toBe(false);
    expect(nonGlobalReason(address)).toMatch(new RegExp(`^${address.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is `));
  });

  it.each([
    // URL hosts in every spelling the WHATWG parser reads, as the stored URL's literal host is judged.
    ['https://2130706433/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
    ['https://127.1/', 'loopback'],
    ['https://0177.0.0.1/', 'loopback'],
    ['https://127.0.0.1./', 'loopback'],
    ['https://%31%32%37.0.0.1/', 'loopback'],
    ['https://[::127.0.0.1]/', 'ipv4Compatible'],
    ['https://[::ffff:7f00:1]/', 'loopback'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://[64:ff9b::127.0.0.1]/', 'loopback'],
    ['https://[64:ff9b:1::a00:1]/', 'rfc6052'],
    ['https://[2002:7f00:1::]/', '6to4'],
    ['https://[2001::1]/', 'teredo'],
    ['https://198.18.0.1/', 'reserved'],
    ['https://192.0.0.8/', 'reserved'],
  ])('refuses the host of %s (%s)', (url, range) => {
    expect(addressRange(hostOf(url))).toBe(range);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '2606:4700::1111',
    '2a00:1450:4001:80e::200e',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
    '64:ff9b::8.8.8.8',
    '[2606:4700::1111]',
  ])('accepts %s', (address) => {
    expect(addressRange(address)).toBe('unicast');
    expect(isGlobalUnicast(address)).toBe(true);
    expect(nonGlobalReason(address)).toBeUndefined();
  });

  it('names the range in its reason', () => {
    expect(nonGlobalReason('127.0.0.1')).toBe('127.0.0.1 is a loopback address');
    expect(nonGlobalReason('::7f00:1')).toBe('::7f00:1 is an IPv4-compatible address');
    expect(nonGlobalReason('2002::1')).toBe('2002::1 is a 6to4 address');
    expect(nonGlobalReason('localhost')).toBe('localhost is not an IP address');
  });
});
