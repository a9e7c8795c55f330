import { X509Certificate as NodeCertificate } from 'node:crypto';
import { ValidationError } from '@platform/errors';
import type { TrustedAuthority } from './authority';
import { readRevocationList } from './crl';
import { soleDerOf, x509 } from './x509';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** Why a license is refused; every one is a 422 at `/register` (docs/licensing.md). */
export type LicenseFailure =
  | 'malformed'
  | 'bad-signature'
  | 'foreign-ca'
  | 'wrong-cluster'
  | 'no-client-auth'
  | 'not-yet-valid'
  | 'expired'
  | 'no-feature-overlap'
  | 'revoked';

/** A refused license: `reason` says which check failed, the message says it for people. */
export class LicenseRejectedError extends ValidationError {
  constructor(
    readonly reason: LicenseFailure,
    message: string,
  ) {
    super(message, [{ field: 'license', description: message }]);
    this.name = 'LicenseRejectedError';
  }
}

/** What a valid license grants, read back from its certificate. */
export interface VerifiedLicense {
  /** Decimal serial: the license ID. */
  serial: string;
  clusterUID: string;
  email: string | undefined;
  productLine: string | undefined;
  tier: string | undefined;
  features: string[];
  plan: string | undefined;
  /** The Locality values as written (`AllowOffline=true`, `DisableAnalytics=false`, ...). */
  flags: string[];
  allowOffline: boolean;
  notBefore: Date;
  notAfter: Date;
}

export interface VerifyOptions {
  /** The cluster the license is presented for: must be its DNS name. */
  clusterUID: string;
  /** Requested features: at least one must be licensed. Unset or empty: not checked (the route refuses empty ones itself). */
  features?: string[];
  /** A CA certificate the client sent along: accepted only if it is the platform CA itself. */
  caCert?: Uint8Array | string;
  /** The revocation list to check the serial against (DER, PEM or base64), signed by the platform CA. */
  crl?: Uint8Array | string;
  /** Whether a serial (decimal) is revoked, for a caller that has the list at hand rather than a CRL. */
  isRevoked?: (serial: string) => boolean | Promise<boolean>;
  /** The moment of the validity check; default now. */
  now?: Date;
}

/**
 * Verifies a license (DER, PEM or base64) as `/register` does: chained to the platform CA, for this cluster,
 * clientAuth, within its validity window, granting one of the requested features, not revoked. Answers what it
 * grants, or throws a `LicenseRejectedError` naming the first check that failed.
 */
export async function verifyLicense(
  license: Uint8Array | string,
  options: VerifyOptions,
  authority: TrustedAuthority,
): Promise<VerifiedLicense> {
  const der = soleDerOf(license);
  let parsed: ParsedLicense;
  try {
    if (!der) throw new Error('not one certificate in DER, PEM or base64');
    parsed = parseLicense(der);
  } catch {
    throw new LicenseRejectedError('malformed', 'the license is not an X.509 certificate (DER, PEM or base64), or not only one');
  }
  if (options.caCert !== undefined && !authority.isPlatformCA(options.caCert))
    throw new LicenseRejectedError('foreign-ca', 'the CA certificate sent is not the platform CA');
  const { keyId } = parsed;
  if (parsed.issuer !== authority.certificate.subject || (keyId && authority.keyId && keyId !== authority.keyId))
    throw new LicenseRejectedError('foreign-ca', 'the license was not issued by the platform CA');
  if (!signedBy(parsed.nodeCertificate, authority))
    throw new LicenseRejectedError(
      'bad-signature',
      'the license signature does not verify: it was altered or not signed by the platform CA',
    );

  const { serial } = parsed;
  if (options.crl !== undefined) {
    const revoked = await readRevocationList(options.crl, authority);
    if (revoked.serials.has(serial)) throw new LicenseRejectedError('revoked', `license ${serial} is revoked`);
  }
  if (options.isRevoked && (await options.isRevoked(serial))) throw new LicenseRejectedError('revoked', `license ${serial} is revoked`);

  const { dnsNames } = parsed;
  if (!dnsNames.includes(options.clusterUID.toLowerCase()))
    throw new LicenseRejectedError(
      'wrong-cluster',
      `the license is for cluster ${dnsNames.join(', ') || '(none)'}, not ${options.clusterUID}`,
    );
  if (!parsed.usages.includes(CLIENT_AUTH))
    throw new LicenseRejectedError('no-client-auth', 'the license lacks the clientAuth extended key usage');

  const now = options.now ?? new Date();
  if (now < parsed.notBefore)
    throw new LicenseRejectedError('not-yet-valid', `the license is valid from ${parsed.notBefore.toISOString()}`);
  if (now > parsed.notAfter) throw new LicenseRejectedError('expired', `the license expired at ${parsed.notAfter.toISOString()}`);

  const { features } = parsed;
  const requested = options.features ?? [];
  if (requested.length > 0 && !requested.some((f) => features.includes(f)))
    throw new LicenseRejectedError(
      'no-feature-overlap',
      `the license grants ${features.join(', ') || 'no features'}, none of ${requested.join(', ')}`,
    );

  return {
    serial,
    clusterUID: options.clusterUID,
    email: parsed.email,
    productLine: parsed.productLine,
    tier: parsed.tier,
    features,
    plan: parsed.plan,
    flags: parsed.flags,
    allowOffline: parsed.flags.includes('AllowOffline=true'),
    notBefore: parsed.notBefore,
    notAfter: parsed.notAfter,
  };
}

/** Everything the checks read from a license, decoded before any check runs. */
interface ParsedLicense {
  nodeCertificate: NodeCertificate;
  issuer: string;
  keyId: string | undefined;
  serial: string;
  dnsNames: string[];
  email: string | undefined;
  usages: string[];
  notBefore: Date;
  notAfter: Date;
  productLine: string | undefined;
  tier: string | undefined;
  features: string[];
  plan: string | undefined;
  flags: string[];
}

/**
 * Decodes the whole certificate at once. The library decodes an extension (SAN, AKI, key usages) only when it is
 * first read, so bytes that frame a valid certificate may still hold an extension that does not decode; reading
 * every field here makes any such failure the one `malformed` refusal instead of an error from a later check.
 */
function parseLicense(der: Uint8Array): ParsedLicense {
  // OpenSSL's parser first: it is several times cheaper and turns away most garbage before the library runs.
  const nodeCertificate = new NodeCertificate(Buffer.from(der));
  const certificate = new x509.X509Certificate(der);
  // Decodes every extension, known or not, so a broken one fails here whichever check would read it.
  const { extensions } = certificate;
  const names = extensions.find((e) => e instanceof x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  const subject = certificate.subjectName;
  return {
    nodeCertificate,
    issuer: certificate.issuer,
    keyId: extensions.find((e) => e instanceof x509.AuthorityKeyIdentifierExtension)?.keyId,
    serial: BigInt(`0x${certificate.serialNumber}`).toString(10),
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value.toLowerCase()),
    email: names.find((n) => n.type === 'email')?.value,
    usages: (extensions.find((e) => e instanceof x509.ExtendedKeyUsageExtension)?.usages ?? []).map(String),
    notBefore: certificate.notBefore,
    notAfter: certificate.notAfter,
    productLine: subject.getField('C')[0],
    tier: subject.getField('ST')[0],
    features: subject.getField('O'),
    plan: subject.getField('OU')[0],
    flags: subject.getField('L'),
  };
}

/** Whether the platform CA signed these bytes; a signature that cannot even be checked (its algorithm altered) is no signature. */
function signedBy(certificate: NodeCertificate, authority: TrustedAuthority): boolean {
  try {
    return certificate.verify(authority.publicKey);
  } catch {
    return false;
  }
}
