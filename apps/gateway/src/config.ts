import { isIP } from 'node:net';
import { z } from 'zod';
import {
  addressVar,
  authzClientEnv,
  boolVar,
  loginFailureWindowVar,
  maxFailuresVar,
  portVar,
  serviceEnv,
  type ConfigOf,
} from '@platform/service-kit';
import { avatarLimitEnv, objectStorageEnv } from '@platform/object-storage';

const PROXY_KEYWORDS = ['loopback', 'linklocal', 'uniquelocal'];

/** An address or CIDR range, or one of Express's names of ranges. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_KEYWORDS.includes(entry)) return true;
  const [ip, prefix, ...rest] = entry.split('/');
  const family = isIP(ip);
  if (!family || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/**
 * TRUST_PROXY: which peers may tell the client's address in X-Forwarded-For (Express `trust proxy`). A number
 * is the count of proxy hops in front of the gateway; otherwise addresses, CIDR ranges or `loopback`,
 * `linklocal`, `uniquelocal`, comma-separated. Unset: X-Forwarded-For is ignored and the client is the peer.
 */
export const trustProxyVar = z
  .string()
  .transform((v, ctx): number | string[] => {
    if (/^\d+$/.test(v)) {
      const hops = Number(v);
      if (hops >= 1 && hops <= 10) return hops;
    } else {
      const entries = v.split(',').map((e) => e.trim());
      if (entries.every(isProxyAddress)) return entries;
    }
    ctx.addIssue({
      code: 'custom',
      message: 'must be a hop count (1-10) or addresses/CIDR ranges/loopback/linklocal/uniquelocal, comma-separated',
    });
    return z.NEVER;
  })
  .optional();

/**
 * The gateway's settings. Its only data are the failed sign-in counts per client address: with DATABASE_URL they
 * are in its schema `gateway`, shared by its replicas; without, in memory. DATA_DIR is accepted but unused.
 */
export const gatewayEnv = {
  ...serviceEnv,
  HTTP_PORT: portVar.default(8080),
  /** The interface HTTP_PORT listens on (e.g. 127.0.0.1 behind a local proxy); default every interface. */
  HTTP_HOST: z.string().min(1).optional(),
  ...authzClientEnv,
  ORGS_TEAMS_GRPC_ADDR: addressVar.default('127.0.0.1:50053'),
  CONTRACTS_LICENSING_GRPC_ADDR: addressVar.default('127.0.0.1:50054'),
  BILLING_DASHBOARD_GRPC_ADDR: addressVar.default('127.0.0.1:50055'),
  METRICSPROXY_GRPC_ADDR: addressVar.default('127.0.0.1:50056'),
  MARKETPLACE_LISTENER_GRPC_ADDR: addressVar.default('127.0.0.1:50057'),
  CLUSTERS_GRPC_ADDR: addressVar.default('127.0.0.1:50058'),
  MARKETPLACE_LISTENER_HTTP_URL: z.url().default('http://127.0.0.1:8081'),
  /** Per-hop deadline for calls to backends, in milliseconds. */
  BACKEND_DEADLINE_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /**
   * Deadline of a response streamed from a backend (the usage views and namespace billing reports), from its
   * arrival to its last byte: a view of 100,000 objects is tens of megabytes, read at the client's pace.
   */
  BACKEND_STREAM_DEADLINE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(300_000),
  /**
   * How long the gateway remembers whom a token belongs to (0: not at all). orgs-teams' notices evict an entry
   * at once when its token is deleted or its account changes; the lifetime bounds a missed notice.
   */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(15_000),
  /**
   * How long the gateway keeps an organization a caller looked up, as that caller may see it (org-views.ts); 0: not
   * at all. Notices evict it at once; the lifetime bounds a notice lost in the bus. orgs-teams reads the same name.
   */
  ORG_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(30_000),
  /**
   * How long the gateway keeps the answer of an authorization check it asked authz (kept-decisions.ts); 0: not at
   * all. Every tuple notice empties them; authz reads the same names for its own cache.
   */
  AUTHZ_DECISION_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(10_000),
  /** Most check answers the gateway keeps; the least recently used go first (0: none). */
  AUTHZ_DECISION_CACHE_SIZE: z.coerce.number().int().min(0).max(10_000_000).default(100_000),
  /** Check every JSON answer against its row's response schema (tests and staging; costs a parse per answer). */
  VALIDATE_RESPONSES: boolVar.default(false),
  /** Signed object URLs (OBJECT_STORAGE_SIGNING_KEY; the key file under DATA_DIR in embedded mode); see docs/object-storage.md. */
  ...objectStorageEnv,
  ...avatarLimitEnv,
  /**
   * The largest contract document (the `document` part of POST/PUT /contracts) in bytes; a larger one is 413.
   * It stays below gRPC's 4 MiB message limit, since the document travels to contracts-licensing in one message.
   */
  CONTRACT_DOCUMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(3 * 1024 * 1024)
    .default(3 * 1024 * 1024),
  /** Failed Basic-auth attempts one client address may make per window before it gets 429 (docs/authentication.md). */
  LOGIN_MAX_FAILURES_PER_ADDRESS: maxFailuresVar.default(30),
  LOGIN_FAILURE_WINDOW_SECONDS: loginFailureWindowVar,
  TRUST_PROXY: trustProxyVar,
  /** Also answer GET /metrics on HTTP_PORT (the one-process launcher sets it); otherwise metrics are only on METRICS_PORT. */
  METRICS_ON_HTTP_PORT: boolVar.default(false),
  /**
   * The built web console (`index.html` and `assets/`); unset: `dist/apps/console` beside the gateway's bundle or
   * under the workspace. Without one the start page lists the services instead.
   */
  CONSOLE_DIR: z.string().min(1).optional(),
  /**
   * Single sign-on through an OpenID provider (docs/authentication.md, "Single sign-on (OIDC)"): its issuer URL turns
   * it on. http is accepted only for a provider on loopback (tests, a local Dex).
   */
  OIDC_ISSUER_URL: z.url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  /** The client secret, or a file holding it (a mounted Kubernetes secret); the file wins. */
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET_FILE: z.string().min(1).optional(),
  /** Space-separated scopes asked for; add the one your provider puts the groups in (Keycloak, Dex: `groups`). */
  OIDC_SCOPES: z.string().min(1).default('openid profile email'),
  OIDC_USERNAME_CLAIM: z.string().min(1).default('preferred_username'),
  OIDC_EMAIL_CLAIM: z.string().min(1).default('email'),
  OIDC_GROUPS_CLAIM: z.string().min(1).default('groups'),
  /**
   * Trust every e-mail address the provider sends as verified, as Keycloak's "Trust Email" does: only for a provider
   * whose addresses nobody can choose (Entra ID sends no email_verified). Default off: an address counts only with
   * `email_verified: true` (docs/authentication.md).
   */
  OIDC_TRUST_EMAIL: boolVar.default(false),
  /** The provider's name on the console's button: "Sign in with <name>". */
  OIDC_DISPLAY_NAME: z.string().min(1).max(64).default('single sign-on'),
  /** The redirect URI registered at the provider; unset, `<PUBLIC_URL>api/v1/user/oidc/callback`. */
  OIDC_REDIRECT_URL: z.url().optional(),
  /**
   * The login of the one account that may still sign in to the console with a password (the break-glass admin);
   * set, the password form is off for everyone else.
   */
  PASSWORD_SIGN_IN_ONLY_FOR: z.string().min(1).optional(),
};
export type GatewayConfig = ConfigOf<typeof gatewayEnv>;
