import { z } from 'zod';
import { objectStorageEnv } from '@platform/object-storage';
import { addressVar, portVar, serviceEnv, type ConfigOf } from '@platform/service-kit';
import { parseCidrSetting, parseTrustedProxies } from './notifications/source-address';

/**
 * The webhook listener's settings (docs/marketplaces.md): the common ones, its HTTP port, how notifications
 * are authenticated, where the services it provisions subscribers through are, and the claimable check.
 */
export const listenerEnv = {
  ...serviceEnv,
  MARKETPLACE_HTTP_PORT: portVar.default(8081),
  /** The interface the webhook listener listens on; the one-process launcher, whose gateway forwards to it, keeps it on loopback. */
  MARKETPLACE_HTTP_HOST: z.string().min(1).optional(),
  /** The secret the second and third providers send as `?secret=`; unset: their notifications are refused (403). */
  MARKETPLACE_API_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Source ranges of the first provider's notifications: a comma-separated CIDR list that replaces the shipped
   * ranges, or, starting with `+`, extends them.
   */
  PROVIDERA_ALLOWED_CIDRS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseCidrSetting(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /**
   * Peers whose X-Forwarded-For is believed (the gateway in front of the listener): comma-separated addresses,
   * CIDRs or `loopback`. Unset: none, the client address is the socket's.
   */
  MARKETPLACE_TRUSTED_PROXIES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseTrustedProxies(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** The third provider's designated test installer, whose notifications need no secret. */
  PROVIDERC_TEST_INSTALLER_ID: z.string().max(64).optional(),
  /** The central marketplace server's listener root; when set the claimable check is asked there. */
  MARKETPLACE_CENTRAL_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /** Seconds after a binding during which the claimable check answers 429 (the buyer's installer is deploying). */
  MARKETPLACE_CLAIM_BACKOFF_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  /** Length in days of the contract a binding makes for the subscriber. */
  MARKETPLACE_CONTRACT_DAYS: z.coerce.number().int().min(1).max(3660).default(365),
  /** Seconds an installer download link stays valid. */
  MARKETPLACE_LINK_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(1800),
  /** The platform admin, who creates the standalone organizations of subscribers until they are claimed. */
  PLATFORM_ADMIN_USERNAME: z.string().default('admin'),
  ORGS_TEAMS_GRPC_ADDR: addressVar.default('127.0.0.1:50053'),
  CONTRACTS_LICENSING_GRPC_ADDR: addressVar.default('127.0.0.1:50054'),
  // The metered-billing proxy (docs/marketplaces.md). First provider: AWS Marketplace Metering.
  /** The Metering endpoint; unset: the SDK's for PROVIDERA_METERING_REGION. Tests point it at a local double. */
  PROVIDERA_METERING_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  PROVIDERA_METERING_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region such as us-east-1')
    .default('us-east-1'),
  /** The listing's product code, sent with every BatchMeterUsage. */
  PROVIDERA_PRODUCT_CODE: z.string().max(255).optional(),
  /** Static credentials; unset: the AWS default chain (web identity, instance role). Never logged. */
  PROVIDERA_ACCESS_KEY_ID: z.string().optional(),
  PROVIDERA_SECRET_ACCESS_KEY: z.string().optional(),
  /** A dimension of the listing, named by the readiness dry run (MeterUsage with DryRun). */
  PROVIDERA_READINESS_DIMENSION: z.string().max(255).optional(),
  // Third provider: Google Service Control.
  PROVIDERC_SERVICE_CONTROL_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .default('https://servicecontrol.googleapis.com'),
  /** The managed service name usage is reported for. */
  PROVIDERC_SERVICE_NAME: z.string().max(255).optional(),
  /** A service-account key file (JSON: client_email, private_key, token_uri); mount it from a secret. */
  PROVIDERC_SERVICE_ACCOUNT_KEY_FILE: z.string().optional(),
  /** The same key's JSON itself (from a Secret as an environment variable); wins over the file. Never logged. */
  PROVIDERC_SERVICE_ACCOUNT_KEY: z.string().optional(),
  /** The consumer (`project:<id>`) a readiness check without a subscription names. */
  PROVIDERC_CONSUMER_ID: z.string().max(140).optional(),
  /** Attempts per provider call (the first included), and the first backoff delay, doubled each retry. */
  METERING_RETRY_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(4),
  METERING_RETRY_BASE_MS: z.coerce.number().int().min(1).max(60_000).default(200),
  METERING_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  // Download links are signed like object URLs (docs/object-storage.md), with the same key.
  OBJECT_STORAGE_URL: objectStorageEnv.OBJECT_STORAGE_URL,
  OBJECT_STORAGE_SIGNING_KEY: objectStorageEnv.OBJECT_STORAGE_SIGNING_KEY,
};
export type ListenerConfig = ConfigOf<typeof listenerEnv>;
