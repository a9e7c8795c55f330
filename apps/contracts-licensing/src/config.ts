import { z } from 'zod';
import { objectStorageEnv } from '@platform/object-storage';
import { addressVar, boolVar, secretsKeyVar, serviceEnv, type ConfigOf } from '@platform/service-kit';

const pemVar = (label: string) =>
  z
    .string()
    .refine((v) => v.includes(`-----BEGIN ${label}`), `must be PEM (-----BEGIN ${label}...)`)
    .optional();

/** contracts-licensing settings: the common ones, the license CA (docs/licensing.md), the inventory and the document storage (docs/contracts.md). */
export const contractsLicensingEnv = {
  ...serviceEnv,
  /** base64 of 32 bytes sealing the stored CA private key. Embedded default: DATA_DIR/secrets/encryption.key. */
  SECRETS_ENCRYPTION_KEY: secretsKeyVar,
  /** The platform CA certificate (PEM), with LICENSE_CA_KEY; unset: the one generated on first start and stored sealed. */
  LICENSE_CA_CERT: pemVar('CERTIFICATE'),
  /** The platform CA private key (PEM, PKCS#8 or SEC1, ECDSA P-256), with LICENSE_CA_CERT. */
  LICENSE_CA_KEY: pemVar(''),
  /** Where the cluster inventory is (clusters): whether a bound cluster is imported, an owner's importable clusters. */
  CLUSTERS_GRPC_ADDR: addressVar.default('127.0.0.1:50058'),
  /**
   * How long what the inventory answered (a cluster by UID, an owner's clusters) is kept; clusters' notice evicts it
   * sooner, and the lifetime bounds only what a notice lost in the bus can cost. 0: not kept.
   */
  INVENTORY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(30_000),
  /** Where billing-dashboard is: the usage that contract quotas are checked against when a license is issued. */
  BILLING_DASHBOARD_GRPC_ADDR: addressVar.default('127.0.0.1:50055'),
  /** Where contract documents are stored (S3 when OBJECT_STORAGE_URL is set, else DATA_DIR/objects); docs/object-storage.md. */
  ...objectStorageEnv,
  /** How often the license gauges (platform_licenses_valid, ..._expiring, platform_licensed_clusters) are counted. */
  LICENSE_METRICS_INTERVAL_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  /** Notices (docs/notifications.md): the SMTP server, smtp://user:pass@host:587 or smtps://...:465; unset: mails are kept (console). */
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: 'must be smtp://[user:password@]host[:port] or smtps://...' }).optional(),
  /** The sender of notice mails. */
  SMTP_FROM: z.string().min(3).max(254).default('Platform <noreply@platform.local>'),
  /** smtp:// only: whether the server must offer STARTTLS (never send credentials or mail in the clear unless false). */
  SMTP_REQUIRE_TLS: boolVar.default(true),
  /** How long one attempt to hand a mail to the SMTP server may take, all of it (connecting, greeting, TLS, sign-in, sending). */
  SMTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** An extra CA (PEM) trusted for SMTP and webhook TLS, beside the system's: a private CA, or a test's. */
  NOTIFICATIONS_CA_CERT: pemVar('CERTIFICATE'),
  /** Whether webhook endpoints may resolve to loopback, private or link-local addresses (off: refused, against SSRF). */
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: boolVar.default(false),
  /** How often contracts are checked against their quotas and ends. */
  NOTICE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** The first webhook retry's wait; each next one doubles it (up to an hour). */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  /** Attempts of one delivery before it is given up. */
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
  /** Failed attempts in a row after which an endpoint is disabled (with an audit event and a mail). */
  WEBHOOK_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(1).max(1_000).default(20),
};
export type ContractsLicensingConfig = ConfigOf<typeof contractsLicensingEnv>;
