import { z } from 'zod';
import {
  addressVar,
  authzClientEnv,
  boolVar,
  ConfigError,
  loginFailureWindowVar,
  maxFailuresVar,
  portVar,
  secretsKeyVar,
  serviceEnv,
  type ConfigOf,
} from '@platform/service-kit';
import { avatarLimitEnv, objectStorageEnv } from '@platform/object-storage';

/** A duration in seconds: a number with an optional unit (s, m, h, d), e.g. `7d`, `30m`, `2` (seconds). */
export const durationVar = z
  .string()
  .regex(/^\d+(?:s|m|h|d)?$/, 'must be a whole number with an optional unit s, m, h or d (e.g. 7d, 30m)')
  .transform((v) => Number(v.replace(/\D$/, '')) * ({ s: 1, m: 60, h: 3600, d: 86_400 }[v.replace(/^\d+/, '')] ?? 1))
  .pipe(
    z
      .number()
      .int()
      .min(1)
      .max(366 * 86_400),
  );
/** orgs-teams settings: the common ones, where authz and the clusters service are, and the first site admin. */
export const orgsTeamsEnv = {
  ...serviceEnv,
  ...authzClientEnv,
  /** Where the clusters service is: team auto-connect sets owners' cluster connections with their membership. */
  CLUSTERS_GRPC_ADDR: addressVar.default('127.0.0.1:50058'),
  /** Where contracts-licensing is: the mails verifying addresses go out through its notices' mailer (SMTP, or kept). */
  CONTRACTS_LICENSING_GRPC_ADDR: addressVar.default('127.0.0.1:50054'),
  PLATFORM_ADMIN_USERNAME: z.string().default('admin'),
  PLATFORM_ADMIN_EMAIL: z.string().default('admin@platform.local'),
  /** When unset on first start, a random password is generated and printed once. */
  PLATFORM_ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  /** Where avatars are stored (S3 when OBJECT_STORAGE_URL is set, else DATA_DIR/objects); see docs/object-storage.md. */
  ...objectStorageEnv,
  ...avatarLimitEnv,
  /** base64 of 32 bytes: key sealing secrets shown again later (manager sync tokens). Embedded default: DATA_DIR/secrets/encryption.key. */
  SECRETS_ENCRYPTION_KEY: secretsKeyVar,
  /**
   * OpenFGA, when authz uses it (authz's setting, read here for its presence only): without it, on a Postgres server,
   * authz keeps the tuples in the platform's database and an organization's creation writes its tuples in its own
   * statement (docs/decisions.md, D134).
   */
  OPENFGA_API_URL: z.url().optional(),
  /** Reported as `isOfflineInstaller` by GET /branding. */
  OFFLINE_INSTALLER: boolVar.default(false),
  /** Wrong passwords one account may have per window before Basic auth answers 429 (docs/authentication.md). */
  LOGIN_MAX_FAILURES_PER_ACCOUNT: maxFailuresVar.default(10),
  LOGIN_FAILURE_WINDOW_SECONDS: loginFailureWindowVar,
  /** A console session ends after this long without a request (docs/authentication.md, "Console sessions"): 7d, 30m, 90s. */
  SESSION_IDLE_TIMEOUT: durationVar.default(7 * 86_400),
  /** A console session ends this long after sign-in, however much it is used. */
  SESSION_MAX_LIFETIME: durationVar.default(30 * 86_400),
  /** Sign-up attempts one client address may make per SIGNUP_WINDOW before 429 (docs/site-settings.md). */
  SIGNUP_MAX_PER_ADDRESS: maxFailuresVar.default(10),
  SIGNUP_WINDOW: durationVar.default(3600),
  /** A new mail verifying an account's address is sent at most this often (docs/authentication.md, "Verified e-mail addresses"). */
  VERIFICATION_MAIL_INTERVAL: durationVar.default(60),
  /** How long a mailed password-reset link works (docs/authentication.md, "Forgotten passwords"): 30m, 1h, 900. */
  PASSWORD_RESET_LINK_LIFETIME: durationVar.default(30 * 60),
  /** Password-reset requests and invalid reset links one client address may send per PASSWORD_RESET_WINDOW before 429. */
  PASSWORD_RESET_MAX_PER_ADDRESS: maxFailuresVar.default(10),
  /** Password-reset requests per login or address named (429 beyond), and mails per account, per PASSWORD_RESET_WINDOW. */
  PASSWORD_RESET_MAX_PER_ACCOUNT: maxFailuresVar.default(3),
  PASSWORD_RESET_WINDOW: durationVar.default(3600),
  /**
   * How long an organization read stays cached (0: no cache). Changes evict it at once, on every replica (a
   * bus notice); the lifetime only bounds how long a replica that missed a notice serves an old row.
   */
  ORG_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(30_000),
  /**
   * The audience Kubernetes ServiceAccount tokens must be issued for to authenticate as the service accounts bound
   * to them (docs/service-accounts.md); unset: such tokens authenticate nobody and Kubernetes is never asked.
   */
  KUBERNETES_TOKEN_AUDIENCE: z.string().min(1).max(256).optional(),
  /** The Kubernetes API TokenReview is asked at; unset: the in-cluster one, from the two variables below. */
  KUBERNETES_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Set by Kubernetes in every pod: where the API server is. */
  KUBERNETES_SERVICE_HOST: z.string().min(1).optional(),
  KUBERNETES_SERVICE_PORT: portVar.default(443),
  /** orgs-teams' own credential for the Kubernetes API (its pod's ServiceAccount token, which the kubelet rotates). */
  KUBERNETES_API_TOKEN_FILE: z.string().min(1).default('/var/run/secrets/kubernetes.io/serviceaccount/token'),
  /** The CA the Kubernetes API's certificate is checked against. */
  KUBERNETES_API_CA_FILE: z.string().min(1).default('/var/run/secrets/kubernetes.io/serviceaccount/ca.crt'),
};
export type OrgsTeamsConfig = ConfigOf<typeof orgsTeamsEnv>;

/**
 * Where TokenReview is asked when KUBERNETES_TOKEN_AUDIENCE is set (undefined when it is not): KUBERNETES_API_URL,
 * else the in-cluster address. Outside a pod without a URL it cannot work, which stops the start.
 */
export function kubernetesApiUrl(config: OrgsTeamsConfig): string | undefined {
  if (!config.KUBERNETES_TOKEN_AUDIENCE) return undefined;
  if (config.KUBERNETES_API_URL) return config.KUBERNETES_API_URL;
  const host = config.KUBERNETES_SERVICE_HOST;
  if (!host)
    throw new ConfigError([
      'KUBERNETES_API_URL: required with KUBERNETES_TOKEN_AUDIENCE outside a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set); ' +
        'set it to the Kubernetes API server, or unset KUBERNETES_TOKEN_AUDIENCE',
    ]);
  return `https://${host.includes(':') ? `[${host}]` : host}:${config.KUBERNETES_SERVICE_PORT}`;
}
