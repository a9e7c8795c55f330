import { BlockList, isIP } from 'node:net';
import shipped from './providera-source-ranges.json';

/** A parsed CIDR: address family, network address and prefix length. */
export interface Cidr {
  family: 'ipv4' | 'ipv6';
  address: string;
  prefix: number;
}

/** What PROVIDERA_ALLOWED_CIDRS says: ranges that replace the shipped ones, or extend them (a leading `+`). */
export interface CidrSetting {
  mode: 'replace' | 'extend';
  ranges: Cidr[];
}

/** Parses `a.b.c.d/n` or `x::/n` (a bare address is its own /32 or /128); throws naming what is wrong. */
export function parseCidr(text: string): Cidr {
  const [address, bits, extra] = text.trim().split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) throw new Error(`${JSON.stringify(text)} is not an address range (a.b.c.d/n or x::/n)`);
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!/^\d{1,3}$/.test(bits ?? String(max)) || prefix > max) throw new Error(`${JSON.stringify(text)}: the prefix must be 0..${max}`);
  return { family: version === 4 ? 'ipv4' : 'ipv6', address, prefix };
}

/** PROVIDERA_ALLOWED_CIDRS: unset is undefined (the shipped ranges); otherwise a comma-separated list, `+` first to extend. */
export function parseCidrSetting(value: string | undefined): CidrSetting | undefined {
  if (value === undefined) return undefined;
  const extend = value.trim().startsWith('+');
  const list = (extend ? value.trim().slice(1) : value)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw new Error('must list at least one address range');
  return { mode: extend ? 'extend' : 'replace', ranges: list.map(parseCidr) };
}

/**
 * MARKETPLACE_TRUSTED_PROXIES as Express's `trust proxy` takes it: addresses, CIDRs and the names `loopback`,
 * `linklocal`, `uniquelocal`; unset is `false` (never believe X-Forwarded-For).
 */
export function parseTrustedProxies(value: string | undefined): string[] | false {
  if (value === undefined) return false;
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of list) if (!['loopback', 'linklocal', 'uniquelocal'].includes(entry)) parseCidr(entry);
  return list.length ? list : false;
}

/** The first provider's allowed source ranges: the shipped ones, replaced or extended by configuration. */
export function providerARanges(setting: CidrSetting | undefined): Cidr[] {
  const own = shipped.ranges.map(parseCidr);
  if (!setting) return own;
  return setting.mode === 'replace' ? setting.ranges : [...own, ...setting.ranges];
}

/** Answers whether an address (IPv4, IPv6, or IPv4-mapped IPv6 as sockets report it) lies in one of the ranges. */
export function addressMatcher(ranges: Cidr[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const r of ranges) list.addSubnet(r.address, r.prefix, r.family);
  return (address) => {
    if (!address) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const plain = mapped ? mapped[1] : address;
    const version = isIP(plain);
    return version !== 0 && list.check(plain, version === 4 ? 'ipv4' : 'ipv6');
  };
}
