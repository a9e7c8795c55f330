import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from '@platform/db';
import { ConfigError, SecretBox } from '@platform/service-kit';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import {
  authorityFromConfig,
  authorityFromPem,
  generateAuthority,
  issueLicense,
  loadAuthority,
  readRevocationList,
  revocationList,
  verifyLicense,
  LicenseRejectedError,
  type LicenseAuthority,
  type LicenseFailure,
  type LicenseTerms,
  type VerifyOptions,
} from '../src/licensing';
import { CA_ALGORITHM, x509 } from '../src/licensing/x509';

const CLUSTER = '6f1c2a4e-8b3d-4e5f-9a0b-1c2d3e4f5a6b';
const DAY = 24 * 3600 * 1000;

/** The terms of a typical license: an enterprise contract ending in 90 days. */
function terms(overrides: Partial<LicenseTerms> = {}): LicenseTerms {
  return {
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
    notAfter: new Date(Date.now() + 90 * DAY),
    ...overrides,
  };
}

async function refusal(
  license: Uint8Array | string,
  options: Partial<VerifyOptions>,
  authority: LicenseAuthority,
): Promise<LicenseFailure> {
  try {
    await verifyLicense(license, { clusterUID: CLUSTER, features: ['observability'], ...options }, authority);
  } catch (err) {
    if (err instanceof LicenseRejectedError) return err.reason;
    throw err;
  }
  throw new Error('the license was accepted');
}

/** A decimal serial as OpenSSL prints it: upper-case hex of its DER bytes. */
function evenHex(serial: string): string {
  const hex = BigInt(serial).toString(16).toUpperCase();
  return hex.length % 2 ? `0${hex}` : hex;
}

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('licensing: the platform CA, licenses, verification and the revocation list', () => {
  let test: { url: string; drop(): Promise<void> };
  let db: Database;
  let other: Database;
  let secrets: SecretBox;
  let authority: LicenseAuthority;
  let dataDir: string;

  beforeAll(async () => {
    test = await createTestDatabase();
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'contracts' });
    other = await openDatabase({ url: test.url, dataDir: '', schema: 'contracts' });
    await db.migrate(migrations);
    secrets = new SecretBox(randomBytes(32));
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-'));
  });

  afterAll(async () => {
    await other?.close();
    await db?.close();
    await test?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('generates one CA when two replicas start at once, stores its key sealed, and finds it again on the next start', async () => {
    const generated: string[] = [];
    const [a, b] = await Promise.all([
      loadAuthority(db, { secrets, onGenerated: (pem) => generated.push(pem) }),
      loadAuthority(other, { secrets, onGenerated: (pem) => generated.push(pem) }),
    ]);
    expect(a.certificatePem).toBe(b.certificatePem);
    expect(generated).toEqual([a.certificatePem]);
    const rows = await db.table('license_authority').select('*');
    expect(rows).toHaveLength(1);
    expect(rows[0].sealed_private_key).not.toMatch(/PRIVATE KEY|MIG/);
    const privateKeyPem = secrets.open(rows[0].sealed_private_key);
    expect(privateKeyPem).toContain('-----BEGIN PRIVATE KEY-----');
    expect(rows[0].sealed_private_key).not.toContain(privateKeyPem.split('\n')[1]);

    const again = await loadAuthority(db, { secrets });
    expect(again.certificatePem).toBe(a.certificatePem);
    await expect(loadAuthority(db, { secrets: new SecretBox(randomBytes(32)) })).rejects.toThrow(/SECRETS_ENCRYPTION_KEY/);
    authority = a;

    // A CA that Node (OpenSSL) reads as one: self-signed, CA:TRUE, may sign certificates and CRLs.
    const ca = new X509Certificate(a.certificatePem);
    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(ca.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const usage = authority.certificate.getExtension(x509.KeyUsagesExtension)!;
    expect(usage.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
  });

  it('takes the CA from LICENSE_CA_CERT and LICENSE_CA_KEY when they are set, and stops on a key that is not the certificate’s', async () => {
    const imported = await generateAuthority();
    const settings = { DATA_DIR: dataDir, LICENSE_CA_CERT: imported.certificatePem, LICENSE_CA_KEY: imported.privateKeyPem };
    const fromConfig = await authorityFromConfig(db, settings);
    expect(fromConfig.certificatePem).toBe(imported.certificatePem);
    expect(
      (await db.table('license_authority').select('certificate_pem')).map((r: { certificate_pem: string }) => r.certificate_pem),
    ).toEqual([authority.certificatePem]);
    const license = await issueLicense(fromConfig, terms());
    expect(new X509Certificate(Buffer.from(license.der)).verify(new X509Certificate(imported.certificatePem).publicKey)).toBe(true);

    const stranger = await generateAuthority();
    await expect(authorityFromConfig(db, { ...settings, LICENSE_CA_KEY: stranger.privateKeyPem })).rejects.toThrow(ConfigError);
    await expect(authorityFromConfig(db, { DATA_DIR: dataDir, LICENSE_CA_CERT: imported.certificatePem })).rejects.toThrow(
      /must be set together/,
    );
  });

  it('issues a license that a different X.509 implementation (Node’s) reads with every field in place', async () => {
    const now = new Date();
    const notAfter = new Date(Date.now() + 90 * DAY);
    const license = await issueLicense(authority, terms({ now, notAfter }));
    const cert = new X509Certificate(Buffer.from(license.der));
    const ca = new X509Certificate(authority.certificatePem);

    expect(cert.subject.split('\n').sort()).toEqual(
      [
        `CN=${CLUSTER}`,
        'C=platform',
        'ST=enterprise',
        'O=observability',
        'O=cost-management',
        'OU=annual',
        'L=AllowOffline=true',
        'L=DisableAnalytics=true',
        'L=EnableClientBilling=false',
        'L=Restrictions={\\"maxNodes\\":50}',
      ].sort(),
    );
    expect(cert.subjectAltName).toBe(`DNS:${CLUSTER}, email:owner@acme.example`);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    const serial = BigInt(`0x${cert.serialNumber}`);
    expect(serial.toString(10)).toBe(license.serial);
    expect(serial > 0n && serial < 2n ** 63n).toBe(true);
    expect(new Date(cert.validFrom).getTime()).toBe(Math.floor(now.getTime() / 1000) * 1000);
    expect(new Date(cert.validTo).getTime()).toBe(Math.floor(notAfter.getTime() / 1000) * 1000);
    expect(license.notAfter.getTime()).toBe(new Date(cert.validTo).getTime());
    expect(cert.issuer).toBe(ca.subject);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.ca).toBe(false);

    // Serials are random: another license of the same terms has another ID.
    expect((await issueLicense(authority, terms())).serial).not.toBe(license.serial);
    // Without offline use there is no AllowOffline value at all; other flags keep theirs.
    const online = new X509Certificate(Buffer.from((await issueLicense(authority, terms({ allowOffline: false }))).der));
    expect(online.subject).not.toContain('AllowOffline');
    expect(online.subject).toContain('L=DisableAnalytics=true');
  });

  it('accepts a valid license in DER, base64 or PEM, with the platform CA sent along, and answers what it grants', async () => {
    const license = await issueLicense(authority, terms());
    const base64 = Buffer.from(license.der).toString('base64');
    const pem = new x509.X509Certificate(license.der).toString('pem');
    for (const form of [license.der, base64, pem]) {
      const valid = await verifyLicense(
        form,
        { clusterUID: CLUSTER, features: ['cost-management', 'unknown'], caCert: authority.certificatePem },
        authority,
      );
      expect(valid).toMatchObject({
        serial: license.serial,
        clusterUID: CLUSTER,
        email: 'owner@acme.example',
        productLine: 'platform',
        tier: 'enterprise',
        plan: 'annual',
        features: ['observability', 'cost-management'],
        allowOffline: true,
      });
    }
  });

  it('refuses malformed, tampered, foreign-CA, wrong-cluster, unusable, expired and feature-less licenses, each with its reason', async () => {
    const license = await issueLicense(authority, terms());
    expect(await refusal('not a certificate', {}, authority)).toBe('malformed');
    expect(await refusal(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]), {}, authority)).toBe('malformed');

    const tampered = Buffer.from(license.der);
    const at = tampered.indexOf('cost-management');
    tampered.write('free-management', at);
    expect(await refusal(tampered, { features: ['free-management'] }, authority)).toBe('bad-signature');

    const foreign = await authorityFromPem(...(Object.values(await generateAuthority()) as [string, string]));
    expect(await refusal((await issueLicense(foreign, terms())).der, {}, authority)).toBe('foreign-ca');
    expect(await refusal(license.der, { caCert: foreign.certificatePem }, authority)).toBe('foreign-ca');

    expect(await refusal(license.der, { clusterUID: '00000000-0000-4000-8000-000000000000' }, authority)).toBe('wrong-cluster');
    expect(await refusal(license.der, { now: new Date(Date.now() + 91 * DAY) }, authority)).toBe('expired');
    expect(await refusal(license.der, { now: new Date(Date.now() - DAY) }, authority)).toBe('not-yet-valid');
    expect(await refusal(license.der, { features: ['billing', 'backup'] }, authority)).toBe('no-feature-overlap');

    // Signed by the platform CA but without clientAuth: not a license.
    const serverOnly = await x509.X509CertificateGenerator.create({
      serialNumber: '01',
      subject: `CN=${CLUSTER}, O=observability`,
      issuer: authority.issuerName,
      notAfter: new Date(Date.now() + DAY),
      publicKey: authority.licensePublicKey,
      signingKey: authority.signingKey,
      signingAlgorithm: CA_ALGORITHM,
      extensions: [
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: CLUSTER }]),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      ],
    });
    expect(await refusal(new Uint8Array(serverOnly.rawData), {}, authority)).toBe('no-client-auth');
  });

  it('lists a revoked license on a CRL signed by the platform CA, which then refuses it', async () => {
    const revoked = await issueLicense(authority, terms());
    const kept = await issueLicense(authority, terms());
    const revokedAt = new Date(Date.now() - 60_000);
    const now = new Date();
    const first = await revocationList(authority, [{ serial: revoked.serial, revokedAt }], { now, number: 7 });
    const second = await revocationList(authority, [{ serial: revoked.serial, revokedAt }]);
    expect(second.number > first.number).toBe(true);
    expect(first.pem).toMatch(/^-----BEGIN X509 CRL-----/);
    expect(first.nextUpdate.getTime()).toBeGreaterThan(first.thisUpdate.getTime());

    const hex = evenHex(revoked.serial);
    if (hasOpenssl) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crl-'));
      try {
        fs.writeFileSync(path.join(dir, 'crl.der'), first.der);
        fs.writeFileSync(path.join(dir, 'ca.pem'), authority.certificatePem);
        const openssl = spawnSync(
          'openssl',
          ['crl', '-inform', 'DER', '-in', path.join(dir, 'crl.der'), '-text', '-noout', '-CAfile', path.join(dir, 'ca.pem')],
          {
            encoding: 'utf8',
          },
        );
        expect(openssl.stderr).toContain('verify OK');
        const text = openssl.stdout;
        expect(text).toContain('Issuer: CN = Platform License CA');
        expect(text).toMatch(/X509v3 CRL Number:\s*\n\s*7\b/);
        expect(text).toContain(`Serial Number: ${hex}`);
        expect(text).not.toContain(`Serial Number: ${evenHex(kept.serial)}`);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    } else {
      const read = await readRevocationList(first.der, authority);
      expect([...read.serials]).toEqual([revoked.serial]);
    }

    expect(await refusal(revoked.der, { crl: first.der }, authority)).toBe('revoked');
    expect(await refusal(revoked.der, { crl: first.pem }, authority)).toBe('revoked');
    expect(await refusal(revoked.der, { isRevoked: (serial) => serial === revoked.serial }, authority)).toBe('revoked');
    await expect(verifyLicense(kept.der, { clusterUID: CLUSTER, crl: first.der }, authority)).resolves.toMatchObject({
      serial: kept.serial,
    });

    // A list not signed by the platform CA is not believed either way.
    const foreign = await authorityFromPem(...(Object.values(await generateAuthority()) as [string, string]));
    const forged = await revocationList(foreign, []);
    await expect(verifyLicense(revoked.der, { clusterUID: CLUSTER, crl: forged.der }, authority)).rejects.toThrow(
      /not signed by the platform CA/,
    );
  });
});

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
    const license = await issueLicense(authority, terms());
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
