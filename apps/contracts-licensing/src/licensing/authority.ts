import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  KeyObject,
  randomBytes,
  sign,
  webcrypto,
  X509Certificate,
} from 'node:crypto';

type CryptoKey = webcrypto.CryptoKey;
type Crypto = webcrypto.Crypto;
import type { Database } from '@platform/db';
import { ConfigError, SecretBox } from '@platform/service-kit';
import { CA_ALGORITHM, derOf, x509 } from './x509';

/** Subject of a generated platform CA. */
export const CA_SUBJECT = 'CN=Platform License CA';
/** Lifetime of a generated platform CA: longer than any contract it signs licenses for. */
const CA_YEARS = 30;
const TABLE = 'license_authority';

/**
 * The platform CA as a verifier needs it: its certificate and public key. What `verifyLicense` checks against;
 * the command-line verifier builds one from a CA file (`trustedAuthority`), the service has the whole `LicenseAuthority`.
 */
export class TrustedAuthority {
  /** The CA certificate, parsed once. */
  readonly certificate: x509.X509Certificate;
  /** Its public key, as Node's crypto verifies with it. */
  readonly publicKey: KeyObject;
  /** Its subject key identifier (hex), matched against a license's authority key identifier. */
  readonly keyId: string | undefined;

  constructor(certificateDer: Uint8Array) {
    this.certificate = new x509.X509Certificate(certificateDer);
    this.publicKey = new X509Certificate(Buffer.from(certificateDer)).publicKey;
    this.keyId = this.certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  }

  /** The CA certificate in PEM, as published. */
  get certificatePem(): string {
    return this.certificate.toString('pem');
  }

  /** True when `candidate` (DER, PEM or base64) is this very certificate, byte for byte. */
  isPlatformCA(candidate: Uint8Array | string): boolean {
    const der = derOf(candidate);
    return der !== undefined && Buffer.from(der).equals(Buffer.from(this.certificate.rawData));
  }
}

/** The platform CA with its private key: issues licenses and signs revocation lists. Build it with `loadAuthority` or `authorityFromPem`. */
export class LicenseAuthority extends TrustedAuthority {
  /** The CA key as a WebCrypto key, imported once (the generators read its algorithm). */
  readonly signingKey: CryptoKey;
  /** The issuer name of everything it signs, parsed once. */
  readonly issuerName: x509.Name;
  /** A WebCrypto-shaped provider for the library's generators (CRLs) whose `sign` is Node's synchronous one on the cached key. */
  readonly signer: Crypto;
  /** Extensions every license carries, encoded once: authority key identifier, key usage, extended key usage clientAuth. */
  readonly licenseExtensions: x509.Extension[];
  /** The subject key of licenses (see docs/licensing.md: a license is a signed statement; the private half is never kept). */
  readonly licensePublicKey: x509.PublicKey;

  private constructor(
    certificateDer: Uint8Array,
    signingKey: CryptoKey,
    private readonly keyObject: KeyObject,
    licensePublicKey: x509.PublicKey,
  ) {
    super(certificateDer);
    this.signingKey = signingKey;
    this.issuerName = this.certificate.subjectName;
    this.licensePublicKey = licensePublicKey;
    this.signer = {
      getRandomValues: <T extends ArrayBufferView | null>(array: T) => webcrypto.getRandomValues(array as never) as T,
      subtle: {
        // The generators expect WebCrypto's ECDSA signature format (r || s) and re-encode it as DER themselves.
        sign: async (_alg: unknown, _key: unknown, data: ArrayBuffer) =>
          sign('sha256', new Uint8Array(data), { key: keyObject, dsaEncoding: 'ieee-p1363' }),
      },
    } as unknown as Crypto;
    this.licenseExtensions = [
      ...(this.keyId ? [new x509.AuthorityKeyIdentifierExtension(this.keyId)] : []),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    ];
  }

  /** The CA's ECDSA signature (DER, as X.509 carries it) of a to-be-signed certificate. */
  signTbs(tbs: Uint8Array): ArrayBuffer {
    return new Uint8Array(sign('sha256', tbs, { key: this.keyObject, dsaEncoding: 'der' })).buffer;
  }

  /**
   * The authority from a CA certificate and its private key (PEM; the key PKCS#8 or SEC1). Refuses a certificate
   * that is not a CA, a key that is not ECDSA P-256, and a key that does not belong to the certificate.
   */
  static async fromPem(certificatePem: string, privateKeyPem: string): Promise<LicenseAuthority> {
    const trusted = trustedAuthority(certificatePem);
    const der = new Uint8Array(trusted.certificate.rawData);
    let keyObject: KeyObject;
    try {
      keyObject = createPrivateKey(privateKeyPem);
    } catch {
      throw new Error('the CA private key is not a PEM private key');
    }
    if (keyObject.asymmetricKeyType !== 'ec' || keyObject.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new Error('the CA private key must be ECDSA P-256');
    const publicDer = createPublicKey(keyObject).export({ type: 'spki', format: 'der' });
    if (!publicDer.equals(trusted.publicKey.export({ type: 'spki', format: 'der' })))
      throw new Error('the CA private key does not belong to the CA certificate');
    const pkcs8 = keyObject.export({ type: 'pkcs8', format: 'der' });
    const signingKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
    const licenseKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' });
    return new LicenseAuthority(der, signingKey as CryptoKey, keyObject, new x509.PublicKey(new Uint8Array(licenseKey)));
  }
}

/**
 * A verifier's view of the platform CA from its certificate (DER, PEM or base64), e.g. the file a customer was
 * given. Refuses a certificate that is not a CA.
 */
export function trustedAuthority(certificate: Uint8Array | string): TrustedAuthority {
  const der = derOf(certificate);
  let trusted: TrustedAuthority | undefined;
  try {
    trusted = der && new TrustedAuthority(der);
  } catch {
    trusted = undefined;
  }
  if (!trusted) throw new Error('the CA certificate is not a DER, PEM or base64 certificate');
  if (!trusted.certificate.getExtension(x509.BasicConstraintsExtension)?.ca)
    throw new Error('the CA certificate is not a CA (basicConstraints CA:TRUE is missing)');
  const usage = trusted.certificate.getExtension(x509.KeyUsagesExtension);
  if (usage && !(usage.usages & x509.KeyUsageFlags.keyCertSign)) throw new Error('the CA certificate may not sign certificates (keyUsage)');
  return trusted;
}

/** A new platform CA: a self-signed ECDSA P-256 certificate (CA, keyCertSign and cRLSign) and its PKCS#8 private key, both PEM. */
export async function generateAuthority(now = new Date()): Promise<{ certificatePem: string; privateKeyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const notBefore = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CA_YEARS);
  const serial = randomBytes(8);
  serial[0] &= 0x7f;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: CA_SUBJECT,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: CA_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const privateKeyPem = KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }) as string;
  return { certificatePem: certificate.toString('pem'), privateKeyPem };
}

/** An authority from PEM texts (LICENSE_CA_CERT and LICENSE_CA_KEY). */
export const authorityFromPem = (certificatePem: string, privateKeyPem: string) => LicenseAuthority.fromPem(certificatePem, privateKeyPem);

export interface LoadAuthorityOptions {
  /** Seals the stored private key (SECRETS_ENCRYPTION_KEY, else the key file under DATA_DIR). */
  secrets: SecretBox;
  /** LICENSE_CA_CERT and LICENSE_CA_KEY: when both are set they are the CA and nothing is generated or stored. */
  certificatePem?: string;
  privateKeyPem?: string;
  /** Told once when a CA is generated. */
  onGenerated?: (certificatePem: string) => void;
}

/**
 * The platform CA: the configured one, else the stored one, else a new one generated, stored sealed and read back.
 * Replicas starting together each may generate one, but only the first insert lands (one row, `on conflict do
 * nothing`) and every replica reads back and uses that one.
 */
export async function loadAuthority(db: Database, options: LoadAuthorityOptions): Promise<LicenseAuthority> {
  if (options.certificatePem !== undefined || options.privateKeyPem !== undefined) {
    if (!options.certificatePem || !options.privateKeyPem) throw new Error('LICENSE_CA_CERT and LICENSE_CA_KEY must be set together');
    return LicenseAuthority.fromPem(options.certificatePem, options.privateKeyPem);
  }
  let row = await db.table(TABLE).where({ id: 1 }).first('certificate_pem', 'sealed_private_key');
  if (!row) {
    const generated = await generateAuthority();
    const inserted = await db
      .table(TABLE)
      .insert({ id: 1, certificate_pem: generated.certificatePem, sealed_private_key: options.secrets.seal(generated.privateKeyPem) })
      .onConflict('id')
      .ignore()
      .returning('id');
    if (inserted.length > 0) options.onGenerated?.(generated.certificatePem);
    row = await db.table(TABLE).where({ id: 1 }).first('certificate_pem', 'sealed_private_key');
  }
  let privateKeyPem: string;
  try {
    privateKeyPem = options.secrets.open(row.sealed_private_key);
  } catch {
    throw new Error('the stored license CA key cannot be opened: SECRETS_ENCRYPTION_KEY is not the key it was sealed with');
  }
  return LicenseAuthority.fromPem(row.certificate_pem, privateKeyPem);
}

/** What `authorityFromConfig` reads: the app's settings (contractsLicensingEnv). */
export interface AuthoritySettings {
  SECRETS_ENCRYPTION_KEY?: string;
  DATA_DIR: string;
  LICENSE_CA_CERT?: string;
  LICENSE_CA_KEY?: string;
}

/** The platform CA the service runs with: LICENSE_CA_* when set, else the stored one (made now on the first start). A bad CA setting stops the start (exit 78). */
export async function authorityFromConfig(
  db: Database,
  config: AuthoritySettings,
  onGenerated?: (certificatePem: string) => void,
): Promise<LicenseAuthority> {
  const configured = config.LICENSE_CA_CERT !== undefined || config.LICENSE_CA_KEY !== undefined;
  try {
    return await loadAuthority(db, {
      secrets: await SecretBox.fromConfig(config.SECRETS_ENCRYPTION_KEY, config.DATA_DIR),
      certificatePem: config.LICENSE_CA_CERT,
      privateKeyPem: config.LICENSE_CA_KEY,
      onGenerated,
    });
  } catch (err) {
    if (configured) throw new ConfigError([`LICENSE_CA_CERT/LICENSE_CA_KEY: ${(err as Error).message}`]);
    if (/SECRETS_ENCRYPTION_KEY/.test((err as Error).message)) throw new ConfigError([(err as Error).message]);
    throw err;
  }
}
