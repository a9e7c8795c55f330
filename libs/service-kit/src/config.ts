import { z } from 'zod';
import { BUS_NAMESPACE_PATTERN } from '@platform/bus';
import { httpServerEnv } from './http-server';
import { grpcMessageLimitVar } from './limits';
import { publicUrlVar } from './public-url';

/** A bad or missing environment variable; the message names it so the operator can fix it. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    // One problem is one line; several are one line each.
    super(problems.length === 1 ? `invalid configuration: ${problems[0]}` : `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Variables whose values never appear in an error message (passwords, keys, secrets, URLs with credentials). */
const SECRET_NAME = /PASSWORD|SECRET|KEY|TOKEN|DATABASE_URL|NATS_URL|HEADERS/;

/** Whether a variable holds a secret (or a URL that may carry one), so its value is never shown. */
export function isSecretVariable(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * A setting's value as it may be shown (the admin CLI's `config`): secrets as `********`; URLs with their
 * password (or a lone user name that may be a token) and query string masked, so the host an operator checks
 * stays visible; unset as `(unset)`.
 */
export function maskedValue(name: string, value: unknown): string {
  if (value === undefined) return '(unset)';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const secret = isSecretVariable(name);
  if (!/_URL$/.test(name)) return secret ? '********' : text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return secret ? '********' : text;
  }
  if (!url.password && !url.username && !url.search) return text;
  if (url.password) url.password = '********';
  // nats://<token>@host: the lone user name of a secret URL may be the credential itself.
  else if (url.username && secret) url.username = '********';
  if (url.search) url.search = '********';
  return url.toString();
}

/** Shape of a config: environment variable name to its schema. */
export type EnvShape = Record<string, z.ZodType>;
export type ConfigOf<S extends EnvShape> = { [K in keyof S]: z.output<S[K]> };

/** Reads and validates the variables named in `shape` from `env`, once; throws ConfigError naming every bad one. */
export function loadConfig<S extends EnvShape>(shape: S, env: NodeJS.ProcessEnv = process.env): ConfigOf<S> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(shape)) {
    const raw = env[name];
    const parsed = schema.safeParse(raw === '' ? undefined : raw);
    if (parsed.success) out[name] = parsed.data;
    else {
      // The value helps to spot a typo, but never for secrets: this message ends up in logs.
      const shown = SECRET_NAME.test(name) ? (raw === undefined ? 'unset' : 'a value that is not shown') : JSON.stringify(raw);
      problems.push(`${name}: ${parsed.error.issues.map((i) => i.message).join('; ')} (got ${shown})`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}

/** A TCP port number; 0 asks the OS for a free one. */
export const portVar = z.coerce.number().int().min(0).max(65535);

/** "true" or "false", nothing else, so a typo is caught at start-up rather than read as false. */
export const boolVar = z.enum(['true', 'false']).transform((v) => v === 'true');

/** A gRPC address host:port. */
export const addressVar = z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port');

/** SECRETS_ENCRYPTION_KEY: base64 of 32 bytes sealing secrets shown or used again later (SecretBox); unset: a key under DATA_DIR. */
export const secretsKeyVar = z
  .string()
  .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be base64 of 32 bytes')
  .optional();

/** PLATFORM_APP_KEYS: comma-separated base64 keys of at least 32 bytes each; the first signs (app-credential.ts). */
export const appKeysVar = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean),
  )
  .refine(
    (keys) => keys.length > 0 && keys.every((k) => Buffer.from(k, 'base64').length >= 32),
    'must be base64 keys of at least 32 bytes, separated by commas',
  )
  .optional();

/** Deployment types the spec gates routes by. */
export const DEPLOYMENT_TYPES = [
  'Hosted',
  'SelfHostedProduction',
  'ProviderAMarketplace',
  'ProviderBMarketplace',
  'ProviderCMarketplace',
] as const;
export type DeploymentType = (typeof DEPLOYMENT_TYPES)[number];

/** Variables every app reads: what kind of deployment this is. */
export const platformEnv = {
  DEPLOYMENT_TYPE: z.enum(DEPLOYMENT_TYPES).default('Hosted'),
  BILLING_ENABLED: boolVar.default(false),
  RUN_MODE: z.enum(['dev', 'prod']).default('prod'),
  /**
   * Slug of the administrative organization, created at bootstrap and owned by the first site admin: site
   * admins cannot be removed from it, and it is the only organization through which the site-wide branding
   * can be changed. `none`: no such organization (any organization's owners may change branding, as the
   * spec's text reads).
   */
  PLATFORM_ADMIN_ORG: z
    .string()
    .regex(/^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/, 'must be an organization name, or none')
    .default('platform-admin')
    .transform((v) => (v === 'none' ? undefined : v)),
  /** The address people and clients reach the platform at; every absolute link is built on it (public-url.ts). */
  PUBLIC_URL: publicUrlVar,
};

/** Variables every backend app reads: where it listens and what it connects to. */
export const serviceEnv = {
  ...platformEnv,
  GRPC_PORT: portVar.default(50051),
  /** The interface the gRPC port listens on: loopback unless the app must be reached from elsewhere (the chart: 0.0.0.0). */
  GRPC_HOST: z.string().min(1).default('127.0.0.1'),
  /** Keys signing the credential the platform's apps present to each other (app-credential.ts); unset: a key of this process's own. */
  PLATFORM_APP_KEYS: appKeysVar,
  /** Where service-account credentials are checked (orgs-teams) and their questions answered (authz). */
  ORGS_TEAMS_GRPC_ADDR: addressVar.default('127.0.0.1:50053'),
  AUTHZ_GRPC_ADDR: addressVar.default('127.0.0.1:50052'),
  /** How long a service account's token is trusted without asking orgs-teams again (notices evict sooner); 0: ask every call. */
  SERVICE_ACCOUNT_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /** Largest gRPC message this app's server (and the gateway's clients) sends or accepts; docs/limits.md. */
  GRPC_MAX_MESSAGE_BYTES: grpcMessageLimitVar,
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  DATA_DIR: z.string().default('.data'),
  /** How many read answers the embedded database keeps until the next write (libs/db result-cache.ts); 0: none. */
  EMBEDDED_RESULT_CACHE_ENTRIES: z.coerce.number().int().min(0).max(100_000).default(2_000),
  NATS_URL: z
    .string()
    .regex(/^(nats|tls):\/\//, 'must be a nats:// URL')
    .optional(),
  /** This installation's names on NATS (bus-readiness.ts); unset: the one made at its first start, kept in its database. */
  BUS_NAMESPACE: z
    .string()
    .regex(BUS_NAMESPACE_PATTERN, 'must be 1 to 40 lower-case letters, digits and dashes, starting with a letter')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Checked here so a wrong value stops the start; the logger reads it from the process's environment (logger.ts). */
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** Where an app run on its own (runMain) serves Prometheus metrics at /metrics; 0 picks a free port (docs/operations.md). */
  METRICS_PORT: portVar.default(9464),
  /** How long a change's outbox entry belongs to the request applying it before the relay may retry it. */
  OUTBOX_LEASE_MS: z.coerce.number().int().min(1_000).max(600_000).default(15_000),
  /** How often the outbox relay looks for changes whose effects were left unapplied. */
  OUTBOX_RELAY_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /**
   * Migrate-only mode (the chart's migration Job, `entrypoint.sh migrate`): open the app's schema, apply its
   * pending migrations and stop, exit code 0; no bus, no servers.
   */
  RUN_MIGRATIONS_ONLY: boolVar.default(false),
  /**
   * How long an app keeps answering after SIGTERM before it stops taking calls (docs/operations.md, "Rolling
   * restarts"): Kubernetes takes a terminating pod out of its Services while it already runs, so calls still come
   * for a moment. Meanwhile it reports itself not ready and closes each HTTP connection after its next answer.
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(120_000).default(0),
  /**
   * How long the stop after the drain may take (running calls get 10 s on gRPC and 10 s more on HTTP, then the app's
   * clients close) before the app gives up, says which step it waited on, and exits 1. The chart sets it to end before
   * the pod's grace period does.
   */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(25_000),
  ...httpServerEnv,
};
export type ServiceConfig = ConfigOf<typeof serviceEnv>;
export type PlatformConfig = ConfigOf<typeof platformEnv>;

/** True on the three marketplace deployment types, where the webhook listener serves. */
export function isMarketplaceDeployment(type: DeploymentType): boolean {
  return type.endsWith('Marketplace');
}

/** Where the authz service listens; every app that checks or writes relationships reads it. */
export const authzClientEnv = {
  AUTHZ_GRPC_ADDR: addressVar.default('127.0.0.1:50052'),
};
