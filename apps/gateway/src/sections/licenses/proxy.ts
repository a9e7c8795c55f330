import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { InputError, ValidationError } from '@platform/errors';
import { publicUrlOf } from '@platform/service-kit';
import { sectionRoutes, type AuthzObject, type EdgeContext, type ObjectResolver, type User } from '../../route';
import { clusterUuid } from '../../params';
import { deniedWhenMissing, listRequest, ownerOf, type Owner } from '../contracts/shared';

// License proxy installers (`POST /user/license-proxy`, docs/licensing.md "License proxy installers"):
// the online one hands out a token scoped to `license-proxy` (docs/authentication.md) that a proxy in the
// customer's cluster uses to issue licenses from this platform; the offline one embeds licenses issued now.

const route = sectionRoutes({ tag: 'Licenses', backend: 'contracts-licensing' });

/** Where the proxy's chart and image are published; the installers name them as they are. */
export const LICENSE_PROXY_CHART = 'oci://ghcr.io/platform/charts/license-proxy';
export const LICENSE_PROXY_IMAGE = 'ghcr.io/platform/license-proxy:latest';
/** The namespace the installers put the proxy in. */
export const LICENSE_PROXY_NAMESPACE = 'kube-system';

export const ISSUE_LICENSE_DENIED = 'you do not have the issue-license:cluster permission on this cluster';

/** A cluster for authz, with `owner` as its owner account for this check (the one a contract names). */
export const clusterOwnedBy = (cluster: string, owner: Owner): AuthzObject => ({
  type: 'cluster',
  id: cluster,
  contextualTuples: [{ user: `${owner.type}:${owner.id}`, relation: 'owner', object: `cluster:${cluster}` }],
});

/** The cluster of an offline installer, for `issue-license:cluster` on it; the `org` account (or the caller's) counts as its owner for one not enrolled. */
const installerCluster: ObjectResolver<{ body: { clusterID?: string } }, EdgeContext & { caller: User }> = {
  describe: 'the cluster `clusterID` (the account counts as its owner for one not enrolled)',
  resolve: async ({ body }, ctx) => clusterOwnedBy(body.clusterID!, ownerOf(ctx)),
};

/** The `org` organization, for `issue_license` on it: who may issue licenses from its contracts. None without `org`. */
const orgAccount: ObjectResolver<unknown, EdgeContext> = {
  describe: 'the organization `org`',
  resolve: async (_input, ctx) => (ctx.org ? { type: 'organization', id: ctx.org.id } : undefined),
};

/** Why a member who may not issue the organization's licenses gets no proxy token for it. */
export const PROXY_ISSUE_DENIED = 'you may not issue licenses for this organization (issue-license), so you may not make its license proxy';

const LicenseProxyRequest = z
  .object({
    clusterID: clusterUuid.optional().meta({ description: 'The cluster of an offline installer' }),
    contractIDs: z
      .array(z.number().int().positive().meta({ format: 'int64' }))
      .max(100)
      .optional()
      .meta({ description: 'The contracts to embed licenses from (default: every active contract with the cluster bound)' }),
  })
  .meta({ id: 'LicenseProxyRequest' });

const LicenseProxyInstaller = z
  .object({
    mode: z.enum(['online', 'offline']),
    helm: z.string().meta({ description: 'A Helm 3 command installing the license proxy' }),
    yaml: z.string().meta({ description: 'The equivalent Kubernetes manifests' }),
    baseURL: z.string().meta({ description: 'The platform base URL the proxy talks to (online) or fetches the CRL from' }),
    tokenName: z.string().optional().meta({ description: 'Online: the name of the scoped token made for the proxy' }),
    licenses: z
      .array(z.object({ contractID: z.number().int(), license: z.string().meta({ description: 'DER, base64', format: 'byte' }) }))
      .optional(),
    caCertificate: z.string().optional().meta({ description: 'Offline: the platform CA certificate (PEM) the licenses chain to' }),
    crl: z.string().optional().meta({ description: 'Offline: where the revocation list is published' }),
  })
  .meta({ id: 'LicenseProxyInstaller', description: 'Free-form installer; keys depend on the flavor' });

type Installer = z.input<typeof LicenseProxyInstaller>;

/** A word for a POSIX shell, single-quoted. */
const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The platform's base URL the proxy will call, without the trailing slash: the configured public URL, never the
 * request's Host (a request naming another host would otherwise get an installer that sends the proxy's token there).
 */
export function baseUrlOf(ctx: Pick<EdgeContext, 'config'>): string {
  return publicUrlOf(ctx.config).replace(/\/$/, '');
}

const labels = { 'app.kubernetes.io/name': 'license-proxy', 'app.kubernetes.io/managed-by': 'platform-installer' };
const metadata = (name: string) => ({ name, namespace: LICENSE_PROXY_NAMESPACE, labels });

/** The Deployment of the proxy, its settings from the ConfigMap and the Secret. */
function deployment(secretEnv: { name: string; key: string }[], mounts: boolean) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata('license-proxy'),
    spec: {
      replicas: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'license-proxy' } },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'license-proxy',
              image: LICENSE_PROXY_IMAGE,
              envFrom: [{ configMapRef: { name: 'license-proxy' } }],
              env: secretEnv.map((e) => ({ name: e.name, valueFrom: { secretKeyRef: { name: 'license-proxy', key: e.key } } })),
              ...(mounts ? { volumeMounts: [{ name: 'licenses', mountPath: '/etc/license-proxy/licenses', readOnly: true }] } : {}),
            },
          ],
          ...(mounts ? { volumes: [{ name: 'licenses', secret: { secretName: 'license-proxy-licenses' } }] } : {}),
        },
      },
    },
  };
}

const manifests = (docs: object[]) => {
  // Loaded on the first installer asked for, not with the route table.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { stringify } = require('yaml') as typeof import('yaml');
  return docs.map((d) => stringify(d)).join('---\n');
};

/** An online installer: a token scoped to `license-proxy` acting for the owner, and where the platform is. */
async function online(ctx: EdgeContext & { caller: User }, owner: Owner): Promise<Installer> {
  const baseURL = baseUrlOf(ctx);
  const token = await ctx.backends.orgsTeams.identity.createToken({
    userId: ctx.caller.id,
    name: `license-proxy-${randomBytes(6).toString('hex')}`,
    scope: 'license-proxy',
    scopeAccountId: owner.id,
    // What a proxy calls: license issue (write:organization) and the CA and CRL (read:misc).
    accessScopes: ['write:organization', 'read:misc'],
  });
  const helm = [
    `helm upgrade --install license-proxy ${LICENSE_PROXY_CHART}`,
    `--namespace ${LICENSE_PROXY_NAMESPACE}`,
    `--set mode=online`,
    `--set-string platform.baseURL=${sh(baseURL)}`,
    `--set-string platform.account=${sh(owner.login)}`,
    `--set-string platform.token=${sh(token.sha1)}`,
  ].join(' \\\n  ');
  const yaml = manifests([
    { apiVersion: 'v1', kind: 'Secret', metadata: metadata('license-proxy'), type: 'Opaque', stringData: { token: token.sha1 } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: metadata('license-proxy'),
      data: { LICENSE_PROXY_MODE: 'online', PLATFORM_BASE_URL: baseURL, PLATFORM_ACCOUNT: owner.login },
    },
    deployment([{ name: 'PLATFORM_TOKEN', key: 'token' }], false),
  ]);
  return { mode: 'online', helm, yaml, baseURL, tokenName: token.name };
}

/** The contracts of an offline installer: those named, or every active one of the owner with the cluster bound. */
async function contractsFor(ctx: EdgeContext, owner: Owner, cluster: string, named: number[] | undefined): Promise<number[]> {
  if (named) return [...new Set(named)];
  const { contracts } = await ctx.kept.contractsLicensing.contracts.listContracts(
    listRequest(owner.id, { activeOnly: true, boundTo: cluster }),
  );
  if (contracts.length === 0)
    throw new InputError(`no active contract of this account has cluster ${cluster} bound`, [
      { field: 'clusterID', description: 'not bound' },
    ]);
  return contracts.map((c) => c.id);
}

/** An offline installer: a license for the cluster from each contract, embedded, with the CA and where the CRL is. */
async function offline(
  ctx: EdgeContext & { caller: User },
  owner: Owner,
  cluster: string,
  named: number[] | undefined,
): Promise<Installer> {
  const baseURL = baseUrlOf(ctx);
  const ids = await contractsFor(ctx, owner, cluster, named);
  const { contracts } = ctx.kept.contractsLicensing;
  const issuer = ctx.backends.contractsLicensing.licenses;
  // Every binding is found (400 for a contract without the cluster) before any license is issued.
  const bindings: { contractId: number; ccId: number }[] = [];
  for (const id of ids) {
    const { clusters } = await deniedWhenMissing(contracts.listContractClusters({ id, ownerId: owner.id, actor: '' }));
    const bound = clusters.find((c) => c.cluster.toLowerCase() === cluster.toLowerCase());
    if (!bound)
      throw new InputError(`contract ${id} does not have cluster ${cluster} bound`, [
        { field: 'contractIDs', description: 'cluster not bound' },
      ]);
    bindings.push({ contractId: id, ccId: bound.id });
  }
  const licenses: { contractID: number; license: string }[] = [];
  for (const b of bindings) {
    const issued = await issuer.issueContractLicense({
      contractId: b.contractId,
      ccId: b.ccId,
      ownerId: owner.id,
      actor: ctx.caller.login,
      ownerEmail: owner.type === 'user' ? ctx.caller.email : '',
    });
    licenses.push({ contractID: b.contractId, license: Buffer.from(issued.license).toString('base64') });
  }
  const { pem } = await ctx.kept.contractsLicensing.licenses.caCertificate({});
  const crl = `${baseURL}/api/v1/licenses/crl`;
  const helm = [
    `helm upgrade --install license-proxy ${LICENSE_PROXY_CHART}`,
    `--namespace ${LICENSE_PROXY_NAMESPACE}`,
    `--set mode=offline`,
    `--set-string cluster=${cluster}`,
    `--set-string crlURL=${sh(crl)}`,
    `--set-string caCertificate=${Buffer.from(pem).toString('base64')}`,
    ...licenses.flatMap((l, i) => [`--set licenses[${i}].contractID=${l.contractID}`, `--set-string licenses[${i}].license=${l.license}`]),
  ].join(' \\\n  ');
  const yaml = manifests([
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: metadata('license-proxy-licenses'),
      type: 'Opaque',
      // Secret data is base64: the licenses' DER as issued.
      data: Object.fromEntries(licenses.map((l) => [`contract-${l.contractID}.der`, l.license])),
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: metadata('license-proxy'),
      data: { LICENSE_PROXY_MODE: 'offline', CLUSTER_ID: cluster, CRL_URL: crl, 'ca.pem': pem },
    },
    deployment([], true),
  ]);
  return { mode: 'offline', helm, yaml, baseURL, licenses, caCertificate: pem, crl };
}

export const licenseProxyRoute = route({
  method: 'post',
  scope: 'write:organization',
  path: '/user/license-proxy',
  summary: 'A license proxy installer (Helm 3 and YAML): online with a token scoped to license-proxy, or offline with licenses embedded',
  auth: 'token',
  gate: 'hosted',
  org: 'optional',
  requires: [{ on: 'org', permission: 'access:org', denied: 'org membership required' }],
  body: { schema: LicenseProxyRequest },
  // A token minted for a caller carries no more than the caller holds: the online installer's token issues the
  // account's licenses, so making it takes the right to issue them (the caller's own account: always). An offline
  // installer embeds licenses for its cluster: issuing them takes what the user issue-license row takes.
  checks: [
    {
      anyOf: [
        {
          check: '`clusterID` (an offline installer: checked next)',
          holds: ({ body }) => Boolean(body.clusterID),
          denied: 'an online installer',
        },
        { check: 'no `org` (the caller’s own account)', holds: (_input, ctx) => !ctx.org, denied: 'another account' },
        { on: orgAccount, relation: 'issue_license', denied: PROXY_ISSUE_DENIED },
      ],
    },
    {
      anyOf: [
        { check: 'no `clusterID` (an online installer)', holds: ({ body }) => !body.clusterID, denied: 'an offline installer' },
        { on: installerCluster, relation: 'issue_license', denied: ISSUE_LICENSE_DENIED },
      ],
    },
  ],
  errors: [
    { status: 422, description: 'for contractIDs without clusterID' },
    { status: 400, description: 'offline: for a contract without the cluster bound (or none with it)' },
    { status: 405, description: 'offline: for a revoked or expired contract' },
  ],
  response: { status: 200, schema: LicenseProxyInstaller },
  async handle({ body }, ctx) {
    const owner = ownerOf(ctx);
    if (body.contractIDs && !body.clusterID)
      throw new ValidationError('clusterID: required with contractIDs', [
        { field: 'body.clusterID', description: 'required with contractIDs' },
      ]);
    if (body.contractIDs && body.contractIDs.length === 0)
      throw new ValidationError('contractIDs: must not be empty', [{ field: 'body.contractIDs', description: 'must not be empty' }]);
    const installer = body.clusterID ? await offline(ctx, owner, body.clusterID, body.contractIDs) : await online(ctx, owner);
    return { body: installer };
  },
});
