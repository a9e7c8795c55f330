import { authorityFromPem, generateAuthority, type LicenseAuthority } from './authority';
import { issueLicense } from './issue';
import { LicenseRejectedError, verifyLicense } from './verify';

const CLUSTER = '6f1c2a4e-8b3d-4e5f-9a0b-1c2d3e4f5a6b';

/**
 * `/register` is public, so whatever bytes a client sends must end in a verified license or a 422: a parse
 * failure deep inside the certificate (an extension's inner structure) must not escape as a 500.
 */
describe('verifyLicense on corrupted licenses', () => {
  let authority: LicenseAuthority;
  let der: Uint8Array;

  beforeAll(async () => {
    const { certificatePem, privateKeyPem } = await generateAuthority();
    authority = await authorityFromPem(certificatePem, privateKeyPem);
    const license = await issueLicense(authority, {
      clusterUID: CLUSTER,
      email: 'owner@acme.example',
      productLine: 'platform',
      tier: 'enterprise',
      features: ['observability', 'cost-management'],
      plan: 'annual',
      allowOffline: true,
      disableAnalytics: true,
      enableClientBilling: false,
      restrictions: '{"maxNodes":50}',
      notAfter: new Date(Date.now() + 90 * 24 * 3600 * 1000),
    });
    der = license.der;
  });

  it('verifies or refuses with LicenseRejectedError every single-byte mutation of a real license, never throws anything else', async () => {
    const options = { clusterUID: CLUSTER, features: ['observability'] };
    await expect(verifyLicense(der, options, authority)).resolves.toMatchObject({ clusterUID: CLUSTER });

    const escaped: string[] = [];
    const reasons = new Map<string, number>();
    for (let at = 0; at < der.length; at++) {
      for (const mask of [0xff, 0x01]) {
        const mutated = Uint8Array.from(der);
        mutated[at] ^= mask;
        try {
          await verifyLicense(mutated, options, authority);
          reasons.set('accepted', (reasons.get('accepted') ?? 0) + 1);
        } catch (err) {
          if (err instanceof LicenseRejectedError) reasons.set(err.reason, (reasons.get(err.reason) ?? 0) + 1);
          else escaped.push(`byte ${at} ^ 0x${mask.toString(16)}: ${(err as Error)?.name}: ${(err as Error)?.message}`);
        }
      }
    }
    expect(escaped).toEqual([]);
    // Every byte is either signed or frames what is signed, so no mutation may pass.
    expect(reasons.get('accepted')).toBeUndefined();
    expect(reasons.get('malformed')).toBeGreaterThan(0);
    expect(reasons.get('bad-signature')).toBeGreaterThan(0);
    // ~1,400 full parses: a few seconds alone, more on a busy machine.
  }, 60_000);

  it('refuses a corrupted base64 or PEM license as malformed or altered, never with another error', async () => {
    const b64 = Buffer.from(der).toString('base64');
    const pem = `-----BEGIN CERTIFICATE-----\n${b64.replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
    for (const text of [b64, pem]) {
      for (let at = 0; at < text.length; at += 7) {
        const mutated = `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
        await verifyLicense(mutated, { clusterUID: CLUSTER }, authority).catch((err: unknown) => {
          if (!(err instanceof LicenseRejectedError)) throw err;
        });
      }
    }
  });
});
