import { randomBytes } from 'node:crypto';
import { InputError } from '@platform/errors';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import * as asn from '@peculiar/asn1-x509';
import type { LicenseAuthority } from './authority';
import { x509 } from './x509';
import { isUuidAnyCase } from '@platform/proto';

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const OID = {
  commonName: '2.5.4.3',
  country: '2.5.4.6',
  locality: '2.5.4.7',
  province: '2.5.4.8',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
};

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

/**
 * Issues one license: a leaf certificate signed by the platform CA, in the shape the product's license verifier
 * reads. The certificate is assembled from @peculiar/x509's own ASN.1 types around the parts that never change
 * (issuer, subject key, algorithm, extensions: parsed once per authority) and signed with Node's ECDSA, which is
 * what `X509CertificateGenerator.create` does minus re-encoding and re-parsing those parts and the result
 * (docs/licensing.md, bench/licenses.ts).
 */
export async function issueLicense(authority: LicenseAuthority, terms: LicenseTerms): Promise<IssuedLicense> {
  const notBefore = wholeSeconds(terms.now ?? new Date());
  const notAfter = wholeSeconds(terms.notAfter);
  checkTerms(terms, notBefore, notAfter);
  const template = templateOf(authority);
  const serial = licenseSerial();
  const tbsCertificate = new asn.TBSCertificate({
    version: asn.Version.v3,
    serialNumber: integerBytes(serial),
    signature: template.algorithm,
    issuer: template.issuer,
    validity: new asn.Validity({ notBefore, notAfter }),
    subject: new asn.Name(licenseSubject(terms)),
    subjectPublicKeyInfo: template.subjectPublicKeyInfo,
    extensions: new asn.Extensions([
      new asn.Extension({
        extnID: asn.id_ce_subjectAltName,
        critical: false,
        extnValue: new OctetString(
          AsnConvert.serialize(
            new asn.SubjectAlternativeName([
              new asn.GeneralName({ dNSName: terms.clusterUID }),
              new asn.GeneralName({ rfc822Name: terms.email }),
            ]),
          ),
        ),
      }),
      ...template.extensions,
    ]),
  });
  const signature = authority.signTbs(new Uint8Array(AsnConvert.serialize(tbsCertificate)));
  const der = AsnConvert.serialize(
    new asn.Certificate({ tbsCertificate, signatureAlgorithm: template.algorithm, signatureValue: signature }),
  );
  return { serial: serial.toString(10), der: new Uint8Array(der), notBefore, notAfter };
}

/** What every license of one authority shares, as ASN.1 values. */
interface LicenseTemplate {
  issuer: asn.Name;
  subjectPublicKeyInfo: asn.SubjectPublicKeyInfo;
  algorithm: asn.AlgorithmIdentifier;
  extensions: asn.Extension[];
}

const templates = new WeakMap<LicenseAuthority, LicenseTemplate>();

function templateOf(authority: LicenseAuthority): LicenseTemplate {
  let template = templates.get(authority);
  if (!template) {
    const ca = AsnConvert.parse(authority.certificate.rawData, asn.Certificate);
    template = {
      issuer: ca.tbsCertificate.subject,
      subjectPublicKeyInfo: AsnConvert.parse(authority.licensePublicKey.rawData, asn.SubjectPublicKeyInfo),
      algorithm: new asn.AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
      extensions: authority.licenseExtensions.map((e) => AsnConvert.parse(e.rawData, asn.Extension)),
    };
    templates.set(authority, template);
  }
  return template;
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

// One attribute per RDN in the order Go's pkix.Name writes them (the product's verifier is Go): C, O, OU, L, ST, CN.
function licenseSubject(terms: LicenseTerms): asn.RelativeDistinguishedName[] {
  return [
    ...attributes(OID.country, [terms.productLine]),
    ...attributes(OID.organization, terms.features),
    ...attributes(OID.organizationalUnit, [terms.plan]),
    ...attributes(OID.locality, licenseFlags(terms)),
    ...attributes(OID.province, [terms.tier]),
    ...attributes(OID.commonName, [terms.clusterUID]),
  ];
}

// Values are taken verbatim. PrintableString where it fits, as Go and OpenSSL write names, else UTF8String.
function attributes(type: string, values: string[]): asn.RelativeDistinguishedName[] {
  return values.map(
    (value) =>
      new asn.RelativeDistinguishedName([
        new asn.AttributeTypeAndValue({
          type,
          value: new asn.AttributeValue(x509.Name.isPrintableString(value) ? { printableString: value } : { utf8String: value }),
        }),
      ]),
  );
}

function checkTerms(terms: LicenseTerms, notBefore: Date, notAfter: Date): void {
  const problems: string[] = [];
  if (!isUuidAnyCase(terms.clusterUID)) problems.push('clusterUID must be a UUID');
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

/** A positive integer as DER INTEGER content: big-endian, minimal, a zero first when the top bit is set. */
function integerBytes(value: bigint): ArrayBuffer {
  const hex = value.toString(16);
  const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  const content = bytes[0] & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes;
  return new Uint8Array(content).buffer;
}

function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}
