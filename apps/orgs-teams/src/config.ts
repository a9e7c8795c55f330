import { z } from 'zod';
import {
  addressVar,
  authzClientEnv,
  boolVar,
  loginFailureWindowVar,
  maxFailuresVar,
  secretsKeyVar,
  serviceEnv,
  type ConfigOf,
} from '@platform/service-kit';
import { avatarLimitEnv, objectStorageEnv } from '@platform/object-storage';

/** orgs-teams settings: the common ones, where authz and the clusters service are, and the first site admin. */
export const orgsTeamsEnv = {
  ...serviceEnv,
  ...authzClientEnv,
  /** Where the clusters service is: team auto-connect sets owners' cluster connections with their membership. */
  CLUSTERS_GRPC_ADDR: addressVar.default('127.0.0.1:50058'),
  PLATFORM_ADMIN_USERNAME: z.string().default('admin'),
  PLATFORM_ADMIN_EMAIL: z.string().default('admin@platform.local'),
  /** When unset on first start, a random password is generated and printed once. */
  PLATFORM_ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  /** Where avatars are stored (S3 when OBJECT_STORAGE_URL is set, else DATA_DIR/objects); see docs/object-storage.md. */
  ...objectStorageEnv,
  ...avatarLimitEnv,
  /** base64 of 32 bytes: key sealing secrets shown again later (manager sync tokens). Embedded default: DATA_DIR/secrets/encryption.key. */
  SECRETS_ENCRYPTION_KEY: secretsKeyVar,
  /** Reported as `isOfflineInstaller` by GET /branding. */
  OFFLINE_INSTALLER: boolVar.default(false),
  /** Wrong passwords one account may have per window before Basic auth answers 429 (docs/authentication.md). */
  LOGIN_MAX_FAILURES_PER_ACCOUNT: maxFailuresVar.default(10),
  LOGIN_FAILURE_WINDOW_SECONDS: loginFailureWindowVar,
  /**
   * How long an organization read stays cached (0: no cache). Changes evict it at once, on every replica (a
   * bus notice); the lifetime only bounds how long a replica that missed a notice serves an old row.
   */
  ORG_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(30_000),
};
export type OrgsTeamsConfig = ConfigOf<typeof orgsTeamsEnv>;
