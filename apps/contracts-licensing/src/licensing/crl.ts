import { AsnConvert } from '@peculiar/asn1-schema';
import { CRLNumber, id_ce_cRLNumber } from '@peculiar/asn1-x509';
import type { LicenseAuthority, TrustedAuthority } from './authority';
import { CA_ALGORITHM, derOf, x509 } from './x509';

/** How long a published list is current when the caller does not say: offline clusters should fetch a new one within it. */
export const CRL_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** A revoked license: its serial (decimal, the license ID) and when its contract was revoked. */
export interface RevokedLicense {
  serial: string;
  revokedAt: Date;
}

export interface RevocationListOptions {
  /** CRL number; must grow with every list published. Default: `now` in milliseconds, which grows without shared state. */
  number?: bigint | number;
  /** thisUpdate; default now. */
  now?: Date;
  /** nextUpdate; default `now` plus CRL_LIFETIME_MS. */
  nextUpdate?: Date;
}

/** A signed revocation list, DER and PEM. */
export interface RevocationList {
  der: Uint8Array;
  pem: string;
  number: bigint;
  thisUpdate: Date;
  nextUpdate: Date;
}

/** The certificate revocation list of `revoked` licenses, signed by the platform CA (RFC 5280: CRL number and authority key identifier). */
export async function revocationList(
  authority: LicenseAuthority,
  revoked: RevokedLicense[],
  options: RevocationListOptions = {},
): Promise<RevocationList> {
  const thisUpdate = new Date(Math.floor((options.now ?? new Date()).getTime() / 1000) * 1000);
  const nextUpdate = options.nextUpdate ?? new Date(thisUpdate.getTime() + CRL_LIFETIME_MS);
  const number = BigInt(options.number ?? thisUpdate.getTime());
  const seen = new Set<string>();
  const crl = await x509.X509CrlGenerator.create(
    {
      issuer: authority.issuerName,
      thisUpdate,
      nextUpdate,
      signingKey: authority.signingKey,
      signingAlgorithm: CA_ALGORITHM,
      entries: revoked
        .filter((r) => !seen.has(r.serial) && seen.add(r.serial))
        .map((r) => ({ serialNumber: hexOf(BigInt(r.serial)), revocationDate: r.revokedAt })),
      extensions: [
        ...authority.licenseExtensions.filter((e) => e instanceof x509.AuthorityKeyIdentifierExtension),
        new x509.Extension(id_ce_cRLNumber, false, AsnConvert.serialize(new CRLNumber(Number(number)))),
      ],
    },
    authority.signer,
  );
  // RFC 7468's label, which OpenSSL and Go expect (the library writes `CRL`).
  return { der: new Uint8Array(crl.rawData), pem: x509.PemConverter.encode(crl.rawData, 'X509 CRL'), number, thisUpdate, nextUpdate };
}

/** A revocation list read back: its revoked serials (decimal). Throws when it is not a CRL signed by the platform CA. */
export async function readRevocationList(
  input: Uint8Array | string,
  authority: TrustedAuthority,
): Promise<{ serials: Set<string>; crl: x509.X509Crl }> {
  const der = derOf(input);
  let crl: x509.X509Crl;
  try {
    if (!der) throw new Error('not DER, PEM or base64');
    crl = new x509.X509Crl(der);
  } catch {
    throw new Error('the revocation list is not an X.509 CRL (DER, PEM or base64)');
  }
  if (crl.issuer !== authority.certificate.subject || !(await crl.verify({ publicKey: authority.certificate.publicKey })))
    throw new Error('the revocation list is not signed by the platform CA');
  return { serials: new Set(crl.entries.map((e) => BigInt(`0x${e.serialNumber}`).toString(10))), crl };
}

function hexOf(value: bigint): string {
  const hex = value.toString(16);
  return hex.length % 2 ? `0${hex}` : hex;
}
