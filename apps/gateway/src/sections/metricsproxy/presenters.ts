import { z } from 'zod';
import type { metricsproxyV1 } from '@platform/proto';

// The shapes of spec 2.6. A body that does not match is 422 naming the field (the edge's validation).

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

export const BackendService = z
  .object({
    scheme: z.enum(['http', 'https']).optional(),
    name: dnsLabel,
    namespace: dnsLabel,
    port: z
      .string()
      .regex(/^\d{1,5}$/, 'must be a port number')
      .refine((p) => Number(p) >= 1 && Number(p) <= 65_535, 'must be a port between 1 and 65535'),
    path: z
      .string()
      .max(1024)
      .regex(/^[^\s?#]*$/, 'must be a URL path')
      .optional(),
    query: z
      .string()
      .max(1024)
      .regex(/^[^\s#]*$/, 'must be a URL query')
      .optional(),
  })
  .meta({ id: 'BackendService', description: 'An in-cluster Service: reached at <scheme>://<name>.<namespace>.svc:<port><path>?<query>' });

const BackendTls = z
  .object({
    ca: pem('CA certificate').optional(),
    cert: pem('client certificate').optional(),
    key: pem('private key').optional(),
    serverName: hostname.optional(),
    insecureSkipTLSVerify: z.boolean().optional(),
  })
  .refine((t) => !t.cert === !t.key, { message: 'cert and key go together', path: ['key'] });

export const BackendConfig = z
  .object({
    url: z
      .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
      .max(2048)
      .optional(),
    service: BackendService.optional(),
    basicAuth: z.object({ username: z.string().min(1).max(255), password: z.string().min(1).max(1024) }).optional(),
    bearerToken: z.string().min(1).max(8192).optional(),
    tls: BackendTls.optional(),
  })
  .superRefine((b, ctx) => {
    if (!b.url === !b.service) ctx.addIssue({ code: 'custom', message: 'give either url or service', path: ['url'] });
    if (b.basicAuth && b.bearerToken)
      ctx.addIssue({ code: 'custom', message: 'give basicAuth or bearerToken, not both', path: ['bearerToken'] });
  })
  .meta({
    id: 'BackendConfig',
    description: 'How the dashboard reaches the metrics backend; credentials go to secure fields or secrets only',
  });

const contextFields = {
  hubUID: uuid.optional().meta({ description: 'The hub; must belong to `org`' }),
  clusterUID: uuid.optional().meta({ description: 'The cluster; must belong to `org` (the hub when only hubUID is given)' }),
  projectId: z.string().regex(PROJECT_ID, 'must be 1 to 63 letters, digits, _ or -').optional(),
  clientOrgID: z
    .string()
    .regex(/^[A-Za-z0-9_.:@-]{1,255}$/, 'must be 1 to 255 letters, digits or _.:@-')
    .optional()
    .meta({ description: 'The client organization the cluster serves; the auth hook answers it as clientOrg' }),
  default: z.boolean().optional().meta({ description: 'Make the datasource the default one' }),
  issueToken: z.boolean().optional().meta({ description: 'Accepted for compatibility; no token is issued (docs/metrics-proxy.md)' }),
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
