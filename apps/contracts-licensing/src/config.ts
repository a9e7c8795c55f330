import { z } from 'zod';
import { objectStorageEnv } from '@platform/object-storage';
import { addressVar, secretsKeyVar, serviceEnv, type ConfigOf } from '@platform/service-kit';

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
  /** Where billing-dashboard is: the usage that contract quotas are checked against when a license is issued. */
  BILLING_DASHBOARD_GRPC_ADDR: addressVar.default('127.0.0.1:50055'),
  /** Where contract documents are stored (S3 when OBJECT_STORAGE_URL is set, else DATA_DIR/objects); docs/object-storage.md. */
  ...objectStorageEnv,
  /** How often the license gauges (platform_licenses_valid, ..._expiring, platform_licensed_clusters) are counted. */
  LICENSE_METRICS_INTERVAL_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
};
export type ContractsLicensingConfig = ConfigOf<typeof contractsLicensingEnv>;
