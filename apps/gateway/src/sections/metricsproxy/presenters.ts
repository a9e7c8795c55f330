import { z } from 'zod';
import type { metricsproxyV1 } from '@platform/proto';

// The spec's metrics proxy shapes. A body that does not match is 422 naming the field (the edge's validation).

const PEM = /^-----BEGIN [A-Z0-9 ]+-----\r?\n[A-Za-z0-9+/=\r\n]+-----END [A-Z0-9 ]+-----\s*$/;
const pem = (what: string) => z.string().max(65_536).regex(PEM, `must be a PEM-encoded ${what}`);
const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a DNS label (RFC 1123)');
const hostname = z
  .string()
  .max(253)
  .regex(/^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$/, 'must be a host name');
const uuid = z.uuid({ error: 'must be a UUID' });
/** A project id ends the datasource name and the hook's uidcid, so it may not hold a dot. */
export const PROJECT_ID = /^[A-Za-z0-9_-]{1,63}$/;

/**
 * Go clients send every field of their structs, a zero value for one left unset: "" for a string, null for a nil
 * pointer, an object of zero values for a struct. Wherever a field is optional, each of these means absent.
 */
function optionalText<T extends z.ZodType>(schema: T) {
  return z
    .union([z.literal(''), z.null(), schema])
    .transform((v) => (v === '' || v === null ? undefined : (v as z.output<T>)))
    .optional();
}

/** An optional object: null (a nil pointer) is absent, and `read` makes the value of what was sent (absent when all zero). */
function optionalStruct<T extends z.ZodType, R>(schema: T, read: (value: z.output<T>, ctx: z.RefinementCtx) => R) {
  return schema
    .nullable()
    .transform((v, ctx) => (v === null ? undefined : read(v as z.output<T>, ctx)))
    .optional();
}

/** An optional boolean: null (a nil *bool) is absent. */
const optionalFlag = () =>
  z
    .boolean()
    .nullable()
    .transform((v) => v ?? undefined)
    .optional();

const unset = (o: object) => Object.values(o).every((v) => v === undefined || v === false);

/** Fields a given object must have: issues for those missing, else the object with them present. */
function requireFields<T extends object, K extends keyof T>(o: T, keys: K[], ctx: z.RefinementCtx, why: string) {
  const missing = keys.filter((k) => o[k] === undefined);
  for (const k of missing) ctx.addIssue({ code: 'custom', message: why, path: [k as string] });
  return missing.length > 0 ? z.NEVER : (o as T & { [P in K]-?: NonNullable<T[P]> });
}

const port = z
  .string()
  .regex(/^\d{1,5}$/, 'must be a port number')
  .refine((p) => Number(p) >= 1 && Number(p) <= 65_535, 'must be a port between 1 and 65535');
const servicePath = z
  .string()
  .max(1024)
  .regex(/^[^\s?#]*$/, 'must be a URL path');
const serviceQuery = z
  .string()
  .max(1024)
  .regex(/^[^\s#]*$/, 'must be a URL query');

/** The service as answered back. */
export const BackendService = z
  .object({
    scheme: z.enum(['http', 'https']).optional(),
    name: dnsLabel,
    namespace: dnsLabel,
    port,
    path: servicePath.optional(),
    query: serviceQuery.optional(),
  })
  .meta({ id: 'BackendService', description: 'An in-cluster Service: reached at <scheme>://<name>.<namespace>.svc:<port><path>?<query>' });

/** The service as sent. */
const BackendServiceInput = z
  .object({
    // An enum of its own rather than optionalText's union, so a wrong scheme is reported as one.
    scheme: z
      .enum(['', 'http', 'https'])
      .nullable()
      .transform((v) => v || undefined)
      .optional(),
    name: optionalText(dnsLabel),
    namespace: optionalText(dnsLabel),
    port: optionalText(port),
    path: optionalText(servicePath),
    query: optionalText(serviceQuery),
  })
  .meta({
    description:
      'An in-cluster Service: reached at <scheme>://<name>.<namespace>.svc:<port><path>?<query>. Every field empty (a Go zero value) or null: no service; otherwise name, namespace and port are required',
  });

const BasicAuthInput = z
  .object({ username: optionalText(z.string().max(255)), password: optionalText(z.string().max(1024)) })
  .meta({ description: 'Both empty, or null: no basic auth; otherwise both are required' });

const BackendTls = z
  .object({
    ca: optionalText(pem('CA certificate')),
    cert: optionalText(pem('client certificate')),
    key: optionalText(pem('private key')),
    serverName: optionalText(hostname),
    insecureSkipTLSVerify: optionalFlag(),
  })
  .refine((t) => !t.cert === !t.key, { message: 'cert and key go together', path: ['key'] })
  .meta({ description: 'Every field empty or false (a Go zero value), or null: no TLS settings' });

export const BackendConfig = z
  .object({
    url: optionalText(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).max(2048)),
    service: optionalStruct(BackendServiceInput, (v, ctx) =>
      unset(v) ? undefined : requireFields(v, ['name', 'namespace', 'port'], ctx, 'required in a service'),
    ),
    basicAuth: optionalStruct(BasicAuthInput, (v, ctx) =>
      unset(v) ? undefined : requireFields(v, ['username', 'password'], ctx, 'username and password go together'),
    ),
    bearerToken: optionalText(z.string().max(8192)),
    tls: optionalStruct(BackendTls, (v) => (unset(v) ? undefined : v)),
  })
  .superRefine((b, ctx) => {
    if (!b.url && !b.service) ctx.addIssue({ code: 'custom', message: 'give either url or service', path: ['url'] });
    if (b.basicAuth && b.bearerToken)
      ctx.addIssue({ code: 'custom', message: 'give basicAuth or bearerToken, not both', path: ['bearerToken'] });
  })
  // Both given: the URL is what the agent says the dashboard server reaches the backend at; `<name>.<namespace>.svc`
  // resolves only inside a cluster, so the service is dropped (docs/metrics-proxy.md).
  .transform((b) => (b.url && b.service ? { ...b, service: undefined } : b))
  .meta({
    id: 'BackendConfig',
    description:
      'How the dashboard reaches the metrics backend; credentials go to secure fields or secrets only. An empty string or null is an absent field; with both url and service, url is used',
  });

const contextFields = {
  hubUID: optionalText(uuid).meta({ description: 'The hub; must belong to `org`' }),
  clusterUID: optionalText(uuid).meta({ description: 'The cluster; must belong to `org` (the hub when only hubUID is given)' }),
  projectId: optionalText(z.string().regex(PROJECT_ID, 'must be 1 to 63 letters, digits, _ or -')),
  clientOrgID: optionalText(z.string().regex(/^[A-Za-z0-9_.:@-]{1,255}$/, 'must be 1 to 255 letters, digits or _.:@-')).meta({
    description: 'The client organization the cluster serves; the auth hook answers it as clientOrg',
  }),
  default: optionalFlag().meta({ description: 'Make the datasource the default one' }),
  issueToken: optionalFlag().meta({ description: 'Accepted for compatibility; no token is issued (docs/metrics-proxy.md)' }),
};
const someCluster = (c: { hubUID?: string; clusterUID?: string }) => c.hubUID !== undefined || c.clusterUID !== undefined;
const NAME_A_CLUSTER = { message: 'give clusterUID or hubUID', path: ['clusterUID'] };

export const RegisterRequest = z
  .object({ backend: BackendConfig, ...contextFields })
  .refine(someCluster, NAME_A_CLUSTER)
  .meta({ id: 'MetricsRegisterRequest' });
export const BackendContext = z.object(contextFields).refine(someCluster, NAME_A_CLUSTER).meta({ id: 'MetricsBackendContext' });

/** The connection fields answered back: never the password, the bearer token or the TLS key. */
const Connection = {
  url: z.string(),
  service: BackendService.optional(),
  basicAuth: z.object({ username: z.string() }).optional(),
  tls: z
    .object({
      ca: z.string().optional(),
      cert: z.string().optional(),
      serverName: z.string().optional(),
      insecureSkipTLSVerify: z.boolean(),
    })
    .optional(),
};

export const FlavorAResponse = z
  .object({
    flavora: z.object({ ...Connection, dashboard: z.object({ datasource: z.string(), folderID: z.number().int() }) }),
    folderID: z.number().int(),
    datasource: z.string().meta({ description: '<owner id>.<cluster UID>[.<projectId>], the auth hook uidcid' }),
  })
  .meta({ id: 'FlavorAResponse' });

export const FlavorBResponse = z
  .object({
    flavorb: z.object({ ...Connection, dashboard: z.object({ projectName: z.string(), folderName: z.string(), datasource: z.string() }) }),
    projectName: z.string(),
    folderName: z.string(),
    datasource: z.string(),
  })
  .meta({ id: 'FlavorBResponse' });

export const AuthHookResult = z
  .object({ owner: z.string(), clusterName: z.string(), tenantID: z.string(), clientOrg: z.string().optional() })
  .meta({ id: 'MetricsAuthHookResult' });

type Backend = z.output<typeof BackendConfig>;

/** The body's backend as the gRPC message. */
export const backendMessage = (b: Backend): metricsproxyV1.BackendConfig => ({
  url: b.url ?? '',
  service: b.service && {
    scheme: b.service.scheme ?? 'http',
    name: b.service.name,
    namespace: b.service.namespace,
    port: b.service.port,
    path: b.service.path ?? '',
    query: b.service.query ?? '',
  },
  basicAuth: b.basicAuth,
  bearerToken: b.bearerToken ?? '',
  tls: b.tls && {
    ca: b.tls.ca ?? '',
    cert: b.tls.cert ?? '',
    key: b.tls.key ?? '',
    serverName: b.tls.serverName ?? '',
    insecureSkipTlsVerify: b.tls.insecureSkipTLSVerify ?? false,
  },
});

/** The connection as answered: the URL the dashboard uses, the username, the public TLS parts. */
export function connectionJson(b: Backend, url: string) {
  const s = b.service;
  return {
    url,
    ...(s && { service: s }),
    ...(b.basicAuth && { basicAuth: { username: b.basicAuth.username } }),
    ...(b.tls && {
      tls: {
        ...(b.tls.ca && { ca: b.tls.ca }),
        ...(b.tls.cert && { cert: b.tls.cert }),
        ...(b.tls.serverName && { serverName: b.tls.serverName }),
        insecureSkipTLSVerify: b.tls.insecureSkipTLSVerify ?? false,
      },
    }),
  };
}
