// The licensing core: the platform CA, license certificates, their verification and the revocation list.
// Loaded on its own by the command-line verifier (@platform/app-contracts-licensing/licensing), without the service.
export {
  CA_SUBJECT,
  LicenseAuthority,
  TrustedAuthority,
  authorityFromConfig,
  authorityFromPem,
  generateAuthority,
  loadAuthority,
  trustedAuthority,
  type AuthoritySettings,
  type LoadAuthorityOptions,
} from './authority';
export { issueLicense, licenseFlags, type IssuedLicense, type LicenseTerms } from './issue';
export { verifyLicense, LicenseRejectedError, type LicenseFailure, type VerifiedLicense, type VerifyOptions } from './verify';
export {
  revocationList,
  readRevocationList,
  CRL_LIFETIME_MS,
  type RevocationList,
  type RevocationListOptions,
  type RevokedLicense,
} from './crl';
// The X.509 library as the licensing code sets it up, for tests and benchmarks that build certificates of their own.
export { x509, CA_ALGORITHM, derOf } from './x509';
