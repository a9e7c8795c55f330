import { randomBytes } from 'node:crypto';
import { InputError } from '@platform/errors';
import type { LicenseAuthority } from './authority';
import { CA_ALGORITHM, x509 } from './x509';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a license grants, in the words of the contract it is issued from (docs/licensing.md lists where each goes). */
export interface LicenseTerms {
  /** The cluster's UUID: CN and the SAN DNS name. */
  clusterUID: string;
  /** The contract owner's email: the SAN email. */
  email: string;
  /** Product line: C (Country). */
  productLine: string;
  /** Tier: ST (Province). */
  tier: string;
  /** Licensed features: one O (Organization) each. */
  features: string[];
  /** Plan: OU (OrganizationalUnit). */
  plan: string;
  /** L (Locality) flags: `AllowOffline=true` (only when true), `DisableAnalytics=`, `EnableClientBilling=`, `Restrictions=`. */
  allowOffline: boolean;
  disableAnalytics: boolean;
  enableClientBilling: boolean;
  /** The contract's JSON-encoded restrictions, as they are ('' when none). */
  restrictions: string;
  /** The contract's end: NotAfter. */
  notAfter: Date;
  /** NotBefore; default now. */
  now?: Date;
}

/** An issued license: its serial (the license ID), the certificate and its validity as written in it (whole seconds). */
export interface IssuedLicense {
  /** Decimal serial number: a random positive 63-bit integer, the license ID. */
  serial: string;
  /** The certificate, DER. The License answer's `license` is its base64. */
  der: Uint8Array;
  notBefore: Date;
  notAfter: Date;
}

/** Issues one license: a leaf certificate signed by the platform CA, in the shape the product's license verifier reads. */
export async function issueLicense(authority: LicenseAuthority, terms: LicenseTerms): Promise<IssuedLicense> {
  const notBefore = wholeSeconds(terms.now ?? new Date());
  const notAfter = wholeSeconds(terms.notAfter);
  checkTerms(terms, notBefore, notAfter);
  const serial = licenseSerial();
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serial.toString(16).padStart(16, '0'),
      subject: new x509.Name(licenseSubject(terms)),
      issuer: authority.issuerName,
      notBefore,
      notAfter,
      publicKey: authority.licensePublicKey,
      signingKey: authority.signingKey,
      signingAlgorithm: CA_ALGORITHM,
      extensions: [
        new x509.SubjectAlternativeNameExtension([
          { type: 'dns', value: terms.clusterUID },
          { type: 'email', value: terms.email },
        ]),
        ...authority.licenseExtensions,
      ],
    },
    authority.signer,
  );
  return { serial: serial.toString(10), der: new Uint8Array(certificate.rawData), notBefore, notAfter };
}

/** The Locality values of a license's flags, in order. */
export function licenseFlags(
  terms: Pick<LicenseTerms, 'allowOffline' | 'disableAnalytics' | 'enableClientBilling' | 'restrictions'>,
): string[] {
  return [
    ...(terms.allowOffline ? ['AllowOffline=true'] : []),
    `DisableAnalytics=${terms.disableAnalytics}`,
    `EnableClientBilling=${terms.enableClientBilling}`,
    `Restrictions=${terms.restrictions}`,
  ];
}

// One attribute per RDN in the order Go's pkix.Name writes them (the product's verifier is Go); structured, so no
// value needs DN escaping.
function licenseSubject(terms: LicenseTerms): x509.JsonNameParams {
  return [
    { C: [terms.productLine] },
    { O: terms.features },
    { OU: [terms.plan] },
    { L: licenseFlags(terms) },
    { ST: [terms.tier] },
    { CN: [terms.clusterUID] },
  ].flatMap((rdn) => {
    const [[type, values]] = Object.entries(rdn) as [string, string[]][];
    return values.map((value) => ({ [type]: [directoryString(value)] }));
  });
}

// Given as typed values, the generator takes them verbatim (a plain string is read as DN text: quotes, `\\` and a
// leading `#` would change it). PrintableString where it fits, as Go and OpenSSL write names, else UTF8String.
function directoryString(value: string): x509.JsonAttributeObject {
  return x509.Name.isPrintableString(value) ? { printableString: value } : { utf8String: value };
}

function checkTerms(terms: LicenseTerms, notBefore: Date, notAfter: Date): void {
  const problems: string[] = [];
  if (!UUID.test(terms.clusterUID)) problems.push('clusterUID must be a UUID');
  if (!/^[^\s@]+@[^\s@]+$/.test(terms.email)) problems.push('email must be an email address');
  if (terms.features.length === 0 || terms.features.some((f) => f === '')) problems.push('features must be non-empty names');
  for (const [name, value] of Object.entries({ productLine: terms.productLine, tier: terms.tier, plan: terms.plan }))
    if (value === '') problems.push(`${name} must not be empty`);
  if (!(notAfter.getTime() > notBefore.getTime())) problems.push('notAfter (the contract end) must be later than now');
  if (problems.length > 0) throw new InputError(`cannot issue the license: ${problems.join('; ')}`);
}

/** A random serial in 1..2^63-1: positive in DER's signed INTEGER, so it fits a signed 64-bit column and Go's big.Int as is. */
function licenseSerial(): bigint {
  const bytes = randomBytes(8);
  bytes[0] &= 0x7f;
  const serial = bytes.readBigUInt64BE();
  return serial === 0n ? licenseSerial() : serial;
}

function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}
