import { parseAllDocuments } from 'yaml';
import { MethodNotAllowedError, NotAuthenticatedError, NotFoundError } from '@platform/errors';
import { contractsV1, licensingV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { registeredRoutesOn } from '../src';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// License proxy installers (docs/licensing.md "License proxy installers") against stand-in backends: the online
// installer asks orgs-teams for a token scoped to `license-proxy` for the account it serves and points it at the
// configured public URL; the offline one embeds a license from each active contract binding the cluster, with the
// CA. Who may make either, and what the proxy's token may do, at the edge. The token's scope stored and answered:
// apps/orgs-teams/test/orgs-teams.int.test.ts; the rows such a token may call: token-scopes.test.ts; real licenses
// in an installer, and a maker's right taken away stopping the proxy on the next request: the licenses e2e file.

const OLIVIA = orgsTeamsV1.User.fromPartial({ id: 1, login: 'olivia', email: 'olivia@example.com', active: true });
const SOLO = orgsTeamsV1.User.fromPartial({ id: 2, login: 'solo', email: 'solo@example.com', active: true });
/** A plain member of acme: issue-license only while `mallory.mayIssue`. */
const MALLORY = orgsTeamsV1.User.fromPartial({ id: 3, login: 'mallory', email: 'mallory@example.com', active: true });
const ACME = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme', visibility: 'private' });
const HUB = '77777777-aaaa-4aaa-8aaa-777777777777';
const OTHER = '88888888-aaaa-4aaa-8aaa-888888888888';
/** acme's contracts: the first two active and binding the hub, one revoked binding it, one binding nothing. */
const FIRST = 21;
const SECOND = 22;
const REVOKED = 23;
const UNBOUND = 24;
const BINDINGS: Record<number, string[]> = { [FIRST]: [HUB], [SECOND]: [HUB], [REVOKED]: [HUB], [UNBOUND]: [] };
const PUBLIC_URL = 'https://platform.example/';
const ORIGIN = 'https://platform.example';
const CA = '-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n';

/** Tokens: a person's by login; a proxy's as `proxy-<maker>` acting for acme, `proxy-solo` for solo's own account. */
const TOKENS: Record<string, { user: orgsTeamsV1.User; scope?: string; scopeAccountId?: number }> = {
  olivia: { user: OLIVIA },
  solo: { user: SOLO },
  mallory: { user: MALLORY },
  'proxy-olivia': { user: OLIVIA, scope: 'license-proxy', scopeAccountId: ACME.id },
  'proxy-mallory': { user: MALLORY, scope: 'license-proxy', scopeAccountId: ACME.id },
  'proxy-solo': { user: SOLO, scope: 'license-proxy', scopeAccountId: SOLO.id },
};

/** The license contracts-licensing issues for a binding: its contract and cluster in its bytes. */
const licenseBytes = (contract: number, cluster: string) => Buffer.from(`license ${contract} ${cluster}`);

describe('license proxy installers', () => {
  let backends: FakeBackends;
  let base: string;
  const gateways: { close(): void }[] = [];
  let selfHosted: string;
  const mallory = { mayIssue: false };

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: async ({ token }) => {
            const t = TOKENS[token];
            if (!t) throw new NotAuthenticatedError('invalid token');
            return { user: t.user, tokenId: 1, scope: t.scope ?? '', scopeAccountId: t.scopeAccountId ?? 0, accessScopes: ['all'] };
          },
          createToken: async ({ name, scope }) => ({
            id: 5,
            name,
            sha1: 'c'.repeat(40),
            tokenLastEight: 'cccccccc',
            accessScopes: ['write:organization', 'read:misc'],
            scope,
          }),
        },
        organizations: {
          getOrg: async ({ name }) => {
            if (name !== 'acme') throw new NotFoundError(`organization ${name} does not exist`);
            return ACME;
          },
        },
      },
      authz: {
        authz: {
          // olivia and mallory are members of acme (olivia its owner); solo is none.
          checkPermission: async ({ userId, objectId }) => ({
            allowed: objectId === ACME.id && (userId === OLIVIA.id || userId === MALLORY.id),
            dependsOn: [],
          }),
          // issue_license on acme and on a cluster acme counts as owning: its owner, and mallory while she may.
          check: async ({ tuple }) => ({
            allowed:
              tuple?.relation === 'issue_license' &&
              (tuple.user === `user:${OLIVIA.id}` || (tuple.user === `user:${MALLORY.id}` && mallory.mayIssue)),
            dependsOn: [],
          }),
        },
      },
      contractsLicensing: {
        contracts: {
          listContracts: async ({ ownerId, boundTo }) => ({
            contracts:
              ownerId === ACME.id
                ? [FIRST, SECOND]
                    .filter((id) => BINDINGS[id].includes(boundTo))
                    .map((id) => contractsV1.Contract.fromPartial({ id, ownerId }))
                : [],
            total: 0,
          }),
          listContractClusters: async ({ id }) => {
            if (!(id in BINDINGS)) throw new NotFoundError(`contract ${id} does not exist`);
            return {
              clusters: BINDINGS[id].map((cluster, i) => contractsV1.ContractClusterStatus.fromPartial({ id: id * 100 + i, cluster })),
            };
          },
        },
        licenses: {
          issueContractLicense: async ({ contractId, ccId }) => {
            if (contractId === REVOKED) throw new MethodNotAllowedError(`contract ${contractId} is revoked`);
            return licensingV1.License.fromPartial({ contractId, license: licenseBytes(contractId, BINDINGS[contractId][ccId % 100]) });
          },
          issueClusterLicense: async ({ ownerId, cluster }) => {
            if (ownerId !== ACME.id) throw new NotFoundError(`no active contract of the account covers cluster ${cluster}`);
            return licensingV1.License.fromPartial({ contractId: FIRST, license: licenseBytes(FIRST, cluster) });
          },
          caCertificate: async () => ({ pem: CA }),
        },
      },
    });
    const hosted = await startTestGateway({ ...backends.env, PUBLIC_URL, PLATFORM_ADMIN_ORG: 'none' });
    const selfHostedGateway = await startTestGateway({
      ...backends.env,
      PUBLIC_URL,
      PLATFORM_ADMIN_ORG: 'none',
      DEPLOYMENT_TYPE: 'SelfHostedProduction',
    });
    gateways.push(hosted, selfHostedGateway);
    base = hosted.base;
    selfHosted = selfHostedGateway.base;
  });
  afterAll(async () => {
    gateways.forEach((g) => g.close());
    await backends?.close();
  });
  beforeEach(() => {
    backends.reset();
    mallory.mayIssue = false;
  });

  const call = async (who: string | undefined, path: string, body: unknown, headers: Record<string, string> = {}, on = base) => {
    const res = await fetch(`${on}/api/v1${path}`, {
      method: 'POST',
      headers: { ...(who ? { authorization: `token ${who}` } : {}), 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  /** The Kubernetes objects of an installer's YAML. */
  const objectsOf = (yaml: string) =>
    parseAllDocuments(yaml).map((d) => d.toJS() as { kind: string; metadata: { name: string }; [k: string]: any });
  const tokensMade = () => backends.orgsTeams.callsTo('identity', 'createToken');
  const issued = () => backends.contractsLicensing.callsTo('licenses', 'issueContractLicense');

  it('online: a Helm 3 command and manifests with a token scoped to license-proxy for the organization, pointed at the public URL', async () => {
    const res = await call('olivia', '/user/license-proxy?org=acme', {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mode: 'online', baseURL: ORIGIN, tokenName: expect.stringMatching(/^license-proxy-/) });
    expect(tokensMade()).toEqual([
      expect.objectContaining({
        userId: OLIVIA.id,
        name: res.body.tokenName,
        scope: 'license-proxy',
        scopeAccountId: ACME.id,
        accessScopes: ['write:organization', 'read:misc'],
      }),
    ]);
    expect(res.body.helm).toMatch(/^helm upgrade --install license-proxy oci:\/\//);
    expect(res.body.helm).toContain(`platform.baseURL='${ORIGIN}'`);
    const objects = objectsOf(res.body.yaml);
    expect(objects.map((o) => o.kind)).toEqual(['Secret', 'ConfigMap', 'Deployment']);
    const token = objects[0].stringData.token as string;
    expect(token).toBe('c'.repeat(40));
    expect(res.body.helm).toContain(`platform.token='${token}'`);
    expect(objects[1].data.PLATFORM_BASE_URL).toBe(ORIGIN);
  });

  it('online for the caller’s own account: the token acts for the user, and forwarded headers do not move the base URL', async () => {
    const res = await call('solo', '/user/license-proxy', {}, { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
    expect(res.status).toBe(200);
    expect(res.body.baseURL).toBe(ORIGIN);
    expect(tokensMade()).toEqual([expect.objectContaining({ userId: SOLO.id, scope: 'license-proxy', scopeAccountId: SOLO.id })]);
  });

  it('the proxy’s token issues for the account it serves, nothing else, and only while its maker may issue its licenses', async () => {
    const issue = (token: string) => call(token, '/license/issue', { cluster: HUB });
    const res = await issue('proxy-olivia');
    expect(res.status).toBe(200);
    expect(res.body.contract.id).toBe(FIRST);
    // For acme (the token's account), with no other organization searched and no person's email.
    expect(backends.contractsLicensing.callsTo('licenses', 'issueClusterLicense')).toEqual([
      expect.objectContaining({ ownerId: ACME.id, cluster: HUB, alsoOwnerIds: [], ownerEmail: '' }),
    ]);
    // The user's own proxy finds none of the organization's contracts.
    expect((await issue('proxy-solo')).status).toBe(404);
    // A token made while mallory might issue acme's licenses stops once she may not.
    mallory.mayIssue = true;
    expect((await issue('proxy-mallory')).status).toBe(200);
    mallory.mayIssue = false;
    const after = await issue('proxy-mallory');
    expect(after).toMatchObject({
      status: 403,
      body: { message: 'the license proxy’s token belongs to someone who may no longer issue licenses for the organization' },
    });
    // A proxy's token names no other account than its own.
    const elsewhere = await call('proxy-solo', '/license/issue?org=acme', { cluster: HUB });
    expect(elsewhere.status).toBe(403);
  });

  it('offline: a license from every active contract with the cluster bound, embedded with the CA and where the CRL is', async () => {
    const res = await call('olivia', '/user/license-proxy?org=acme', { clusterID: HUB });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mode: 'offline', crl: `${ORIGIN}/api/v1/licenses/crl`, caCertificate: CA });
    const licenses = res.body.licenses as { contractID: number; license: string }[];
    expect(licenses).toEqual([
      { contractID: FIRST, license: licenseBytes(FIRST, HUB).toString('base64') },
      { contractID: SECOND, license: licenseBytes(SECOND, HUB).toString('base64') },
    ]);
    expect(issued()).toEqual([
      expect.objectContaining({ contractId: FIRST, ownerId: ACME.id, actor: 'olivia', ownerEmail: '' }),
      expect.objectContaining({ contractId: SECOND, ownerId: ACME.id, actor: 'olivia', ownerEmail: '' }),
    ]);
    // The manifests carry the licenses in a Secret, the Helm command sets them.
    const [secret, config] = objectsOf(res.body.yaml);
    expect(secret.kind).toBe('Secret');
    expect(Object.values(secret.data).sort()).toEqual(licenses.map((l) => l.license).sort());
    expect(config.data['ca.pem']).toBe(CA);
    for (const [i, l] of licenses.entries()) expect(res.body.helm).toContain(`licenses[${i}].license=${l.license}`);
    // No token is made for an offline proxy.
    expect(tokensMade()).toEqual([]);

    // Named contracts: only those.
    backends.reset();
    const one = await call('olivia', '/user/license-proxy?org=acme', { clusterID: HUB, contractIDs: [SECOND] });
    expect(one.status).toBe(200);
    expect(one.body.licenses.map((l: { contractID: number }) => l.contractID)).toEqual([SECOND]);
  });

  it('offline: 400 for a contract without the cluster bound or a cluster none binds, 405 for a revoked one, nothing issued first', async () => {
    const unbound = await call('olivia', '/user/license-proxy?org=acme', { clusterID: HUB, contractIDs: [FIRST, UNBOUND] });
    expect(unbound).toMatchObject({ status: 400, body: { message: `contract ${UNBOUND} does not have cluster ${HUB} bound` } });
    expect(issued()).toEqual([]);
    expect((await call('olivia', '/user/license-proxy?org=acme', { clusterID: OTHER })).status).toBe(400);
    expect((await call('olivia', '/user/license-proxy?org=acme', { clusterID: HUB, contractIDs: [REVOKED] })).status).toBe(405);
  });

  it('only who may issue the organization’s licenses gets its proxy: a member without issue-license 403 and no token made', async () => {
    const refused = await call('mallory', '/user/license-proxy?org=acme', {});
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/may not issue licenses for this organization/);
    expect((await call('mallory', '/user/license-proxy?org=acme', { clusterID: HUB })).status).toBe(403);
    expect(tokensMade()).toEqual([]);
    expect(issued()).toEqual([]);
    // Given issue-license (a custom role, in authz), she may.
    mallory.mayIssue = true;
    expect((await call('mallory', '/user/license-proxy?org=acme', {})).status).toBe(200);
    expect(tokensMade()).toEqual([expect.objectContaining({ userId: MALLORY.id, scopeAccountId: ACME.id })]);
  });

  it('403 for a non-member of the organization, 401 without a token, 422 for a malformed body, nothing asked', async () => {
    expect((await call('solo', '/user/license-proxy?org=acme', {})).status).toBe(403);
    expect((await call(undefined, '/user/license-proxy?org=acme', {})).status).toBe(401);
    for (const body of [
      { clusterID: 'not-a-uuid' },
      { contractIDs: [FIRST] },
      { contractIDs: 'all' },
      { clusterID: HUB, contractIDs: [-1] },
      '[1]',
    ]) {
      const res = await call('olivia', '/user/license-proxy?org=acme', body);
      expect([body, res.status]).toEqual([body, 422]);
    }
    expect(tokensMade()).toEqual([]);
    expect(issued()).toEqual([]);
  });

  it('is not there on a self-hosted deployment (404)', async () => {
    expect(registeredRoutesOn({ DEPLOYMENT_TYPE: 'SelfHostedProduction' }).some((r) => r.path === '/user/license-proxy')).toBe(false);
    expect(registeredRoutesOn({ DEPLOYMENT_TYPE: 'Hosted' }).some((r) => r.path === '/user/license-proxy')).toBe(true);
    expect((await call('olivia', '/user/license-proxy', {}, {}, selfHosted)).status).toBe(404);
    expect(tokensMade()).toEqual([]);
  });
});
