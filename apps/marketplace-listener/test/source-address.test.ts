import { ConfigError, loadConfig } from '@platform/service-kit';
import { listenerEnv } from '../src/config';
import { addressMatcher, parseCidrSetting, providerARanges } from '../src/notifications/source-address';

describe("the first provider's source ranges", () => {
  it('matches IPv4, IPv6 and IPv4-mapped addresses against the ranges, and nothing else', () => {
    const inRange = addressMatcher(providerARanges(parseCidrSetting('10.0.0.0/8, 2001:db8::/32, 192.0.2.7')));
    expect(['10.1.2.3', '::ffff:10.200.0.1', '2001:db8::42', '192.0.2.7'].map(inRange)).toEqual([true, true, true, true]);
    expect(['11.0.0.1', '192.0.2.8', '2001:db9::1', '127.0.0.1', '', undefined, 'not-an-ip'].map(inRange)).toEqual(Array(7).fill(false));
  });

  it('ships ranges of its own, which a plain list replaces and a "+" list extends', () => {
    const shipped = providerARanges(undefined);
    expect(shipped.length).toBeGreaterThan(0);
    expect(providerARanges(parseCidrSetting('10.0.0.0/8'))).toEqual([{ family: 'ipv4', address: '10.0.0.0', prefix: 8 }]);
    expect(providerARanges(parseCidrSetting('+10.0.0.0/8'))).toEqual([...shipped, { family: 'ipv4', address: '10.0.0.0', prefix: 8 }]);
    const shippedOnly = addressMatcher(shipped);
    expect(shippedOnly('10.0.0.1')).toBe(false);
    expect(addressMatcher(providerARanges(parseCidrSetting('+10.0.0.0/8')))(`${shipped[0].address}`)).toBe(true);
  });

  it('stops the start on a bad range or trusted proxy, naming the variable', () => {
    const load = (env: Record<string, string>) => () => loadConfig(listenerEnv, env);
    expect(load({ PROVIDERA_ALLOWED_CIDRS: '10.0.0.0/33' })).toThrow(ConfigError);
    expect(load({ PROVIDERA_ALLOWED_CIDRS: '10.0.0.0/33' })).toThrow(/PROVIDERA_ALLOWED_CIDRS: "10.0.0.0\/33": the prefix must be 0..32/);
    expect(load({ PROVIDERA_ALLOWED_CIDRS: '+' })).toThrow(/PROVIDERA_ALLOWED_CIDRS: must list at least one address range/);
    expect(load({ MARKETPLACE_TRUSTED_PROXIES: 'gateway.local' })).toThrow(
      /MARKETPLACE_TRUSTED_PROXIES: "gateway.local" is not an address range/,
    );
    expect(loadConfig(listenerEnv, { MARKETPLACE_TRUSTED_PROXIES: 'loopback, 10.1.0.0/16' }).MARKETPLACE_TRUSTED_PROXIES).toEqual([
      'loopback',
      '10.1.0.0/16',
    ]);
    expect(loadConfig(listenerEnv, {}).MARKETPLACE_TRUSTED_PROXIES).toBe(false);
  });
});
