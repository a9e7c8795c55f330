import { X509Certificate } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { registeredRoutesOn } from '@platform/app-gateway';
import { formOf, basic, bootTestPlatform, type TestPlatform } from './harness';

/**
 * License proxy installers (`POST /user/license-proxy`, docs/licensing.md "License proxy installers"):
 * the online installer's token is scoped to `license-proxy` (docs/authentication.md) — it issues licenses for the
 * account it was made for and reads the CA and the CRL, nothing else, and dies with its deletion; the offline
 * installer embeds licenses for one cluster that Node's X.509 implementation reads.
 */

const NOW = Math.floor(Date.now() / 1000);
const YEAR = 365 * 24 * 3600;
const HUB = '77777777-aaaa-4aaa-8aaa-777777777777';
const OTHER = '88888888-aaaa-4aaa-8aaa-888888888888';

/** The Kubernetes objects of an installer's YAML. */
const objectsOf = (yaml: string) =>
  parseAllDocuments(yaml).map((d) => d.toJS() as { kind: string; metadata: { name: string }; [k: string]: any });

describe('license proxy installers on a hosted deployment', () => {
  let t: TestPlatform;
  const api: TestPlatform['api'] = (...args) => t.api(...args);
  let contractId: number;

  const createContract = async (org: string | undefined, fields: Record<string, string> = {}) => {
    const created = await t.send(
      'root',
      'POST',
      `/contracts${org ? `?org=${org}` : ''}`,
      formOf({ products: 'productdb', end: String(NOW + YEAR), ...fields }),
    );
    expect(created.status).toBe(201);
    return created.body[0].id as number;
  };
  const bind = async (id: number, cluster: string) =>
    expect((await api('root', 'POST', `/contracts/${id}/clusters?org=acme`, [{ cluster }])).status).toBe(201);

  beforeAll(async () => {
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: 'Hosted' });
    for (const who of ['olivia', 'solo']) await t.signUp(who);
    expect((await api('olivia', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
    expect((await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'prod', uid: HUB })).status).toBe(201);
    contractId = await createContract('acme', { features: JSON.stringify(['postgres']) });
    await bind(contractId, HUB);
  }, 120_000);
  afterAll(() => t?.stop());

  it('online: a Helm 3 command and manifests with a token scoped to license-proxy, pointed at the platform', async () => {
    const res = await api('olivia', 'POST', '/user/license-proxy?org=acme', {});
    expect(res.status).toBe(200);
    const origin = new URL(t.platform.url).origin;
    expect(res.body).toMatchObject({ mode: 'online', baseURL: origin, tokenName: expect.stringMatching(/^license-proxy-/) });
    expect(res.body.helm).toMatch(/^helm upgrade --install license-proxy oci:\/\//);
    expect(res.body.helm).toContain(`platform.baseURL='${origin}'`);
    const objects = objectsOf(res.body.yaml);
    expect(objects.map((o) => o.kind)).toEqual(['Secret', 'ConfigMap', 'Deployment']);
    const token = objects[0].stringData.token as string;
    expect(token).toMatch(/^[0-9a-f]{40}$/);
    expect(res.body.helm).toContain(`platform.token='${token}'`);
    expect(objects[1].data.PLATFORM_BASE_URL).toBe(origin);
    t.tokens.proxy = token;

    // The proxy issues licenses for the organization's contract (the cluster is bound to it) ...
    const issued = await api('proxy', 'POST', '/license/issue', { cluster: HUB });
    expect(issued.status).toBe(200);
    expect(issued.body.contract.id).toBe(contractId);
    expect(new X509Certificate(Buffer.from(issued.body.license, 'base64')).subject).toContain(`CN=${HUB}`);
    expect((await api('proxy', 'GET', '/licenses/ca')).status).toBe(200);
    expect((await api('proxy', 'GET', '/licenses/crl')).status).toBe(200);
    // ... and nothing else, public rows included.
    for (const [method, path] of [
      ['GET', '/user'],
      ['GET', '/orgs/acme'],
      ['GET', '/user/contracts?org=acme'],
      ['POST', '/user/license-proxy?org=acme'],
    ]) {
      const refused = await api('proxy', method, path, method === 'POST' ? {} : undefined);
      expect([path, refused.status, refused.body.message]).toEqual([path, 403, 'this token may only be used by a license proxy']);
    }

    // The owner sees the token with its scope; deleting it stops the proxy at once.
    const auth = { authorization: basic('olivia', 'olivia-password') };
    const listed = await api(undefined, 'GET', '/users/olivia/tokens', undefined, auth);
    const mine = (listed.body as { id: number; name: string; scope?: string }[]).find((x) => x.name === res.body.tokenName)!;
    expect(mine.scope).toBe('license-proxy');
    expect((await api(undefined, 'DELETE', `/users/olivia/tokens/${mine.id}`, undefined, auth)).status).toBe(204);
    expect((await api('proxy', 'POST', '/license/issue', { cluster: HUB })).status).toBe(401);
  });

  it('online for the caller’s own account: the proxy acts for the user, and finds none of the organization’s contracts', async () => {
    // Forwarded headers are believed only when TRUST_PROXY says so (unset here): the base URL is where the request came.
    const res = await api('solo', 'POST', '/user/license-proxy', {}, { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
    expect(res.status).toBe(200);
    expect(res.body.baseURL).toBe(new URL(t.platform.url).origin);
    t.tokens.soloProxy = objectsOf(res.body.yaml)[0].stringData.token;
    expect((await api('soloProxy', 'POST', '/license/issue', { cluster: HUB })).status).toBe(404);
  });

  it('offline: the licenses of every active contract with the cluster bound, embedded with the CA, read by Node’s X.509', async () => {
    const second = await createContract('acme', { features: JSON.stringify(['mysql']), allowOffline: 'true' });
    await bind(second, HUB);
    const res = await api('olivia', 'POST', '/user/license-proxy?org=acme', { clusterID: HUB });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('offline');
    expect(res.body.crl).toBe(`${new URL(t.platform.url).origin}/api/v1/licenses/crl`);
    const ca = new X509Certificate(res.body.caCertificate);
    const licenses = res.body.licenses as { contractID: number; license: string }[];
    expect(licenses.map((l) => l.contractID).sort()).toEqual([contractId, second].sort());
    for (const l of licenses) {
      const cert = new X509Certificate(Buffer.from(l.license, 'base64'));
      expect(cert.subject).toContain(`CN=${HUB}`);
      expect(cert.subjectAltName).toContain(`DNS:${HUB}`);
      expect(cert.checkIssued(ca) && cert.verify(ca.publicKey)).toBe(true);
    }
    // The manifests carry the licenses in a Secret, the Helm command sets them.
    const [secret, config] = objectsOf(res.body.yaml);
    expect(secret.kind).toBe('Secret');
    expect(Object.values(secret.data).sort()).toEqual(licenses.map((l) => l.license).sort());
    expect(config.data['ca.pem']).toBe(res.body.caCertificate);
    for (const [i, l] of licenses.entries()) expect(res.body.helm).toContain(`licenses[${i}].license=${l.license}`);

    // Named contracts: only those.
    const one = await api('olivia', 'POST', '/user/license-proxy?org=acme', { clusterID: HUB, contractIDs: [second] });
    expect(one.status).toBe(200);
    expect(one.body.licenses.map((l: { contractID: number }) => l.contractID)).toEqual([second]);
  });

  it('offline: 400 for a contract without the cluster bound, 405 for a revoked one', async () => {
    const unbound = await createContract('acme');
    const res = await api('olivia', 'POST', '/user/license-proxy?org=acme', { clusterID: HUB, contractIDs: [unbound] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(`contract ${unbound} does not have cluster ${HUB} bound`);
    expect((await api('olivia', 'POST', '/user/license-proxy?org=acme', { clusterID: OTHER })).status).toBe(400);
    const revoked = await createContract('acme');
    await bind(revoked, HUB);
    expect((await api('root', 'POST', `/contracts/${revoked}/revoke`)).status).toBe(200);
    expect((await api('olivia', 'POST', '/user/license-proxy?org=acme', { clusterID: HUB, contractIDs: [revoked] })).status).toBe(405);
  });

  it('online: only who may issue the organization’s licenses gets its proxy token, and the proxy loses what its maker loses', async () => {
    // mallory is a plain member of acme: refused by both issue-license rows, so by the installer too.
    await t.signUp('mallory');
    const staff = await api('olivia', 'POST', '/orgs/acme/teams', { name: 'staff', type: 'general' });
    expect(staff.status).toBe(201);
    expect((await api('olivia', 'PUT', `/teams/${staff.body.id}/members/mallory`)).status).toBe(204);
    const [binding] = (await api('mallory', 'GET', `/user/contracts/${contractId}/clusters?org=acme`)).body as { id: number }[];
    expect((await api('mallory', 'POST', `/user/contracts/${contractId}/clusters/${binding.id}/issue-license?org=acme`)).status).toBe(403);
    const refused = await api('mallory', 'POST', '/user/license-proxy?org=acme', {});
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/may not issue licenses for this organization/);
    const listed = await api(undefined, 'GET', '/users/mallory/tokens', undefined, { authorization: basic('mallory', 'mallory-password') });
    expect(listed.body.filter((x: { scope?: string }) => x.scope === 'license-proxy')).toEqual([]);

    // Given issue-license through a custom role, mallory may make the proxy, and it issues ...
    const role = await api('olivia', 'POST', '/authz/roles?org=acme', {
      name: 'licensers',
      permissions: [{ namespace: 'cluster', action: 'issue-license' }],
    });
    expect(role.status).toBe(201);
    expect((await api('olivia', 'PATCH', `/teams/${staff.body.id}`, { name: 'staff', assignedRoleIDs: [role.body.id] })).status).toBe(200);
    const made = await api('mallory', 'POST', '/user/license-proxy?org=acme', {});
    expect(made.status).toBe(200);
    t.tokens.malloryProxy = objectsOf(made.body.yaml)[0].stringData.token;
    expect((await api('malloryProxy', 'POST', '/license/issue', { cluster: HUB })).status).toBe(200);
    // ... until the role is taken from her: the very next request through the proxy is refused.
    expect((await api('olivia', 'PATCH', `/teams/${staff.body.id}`, { name: 'staff', assignedRoleIDs: [] })).status).toBe(200);
    const after = await api('malloryProxy', 'POST', '/license/issue', { cluster: HUB });
    expect(after.status).toBe(403);
    expect(after.body.message).toBe('the license proxy’s token belongs to someone who may no longer issue licenses for the organization');
    // The owner's own proxy still issues.
    const owners = await api('olivia', 'POST', '/user/license-proxy?org=acme', {});
    t.tokens.ownersProxy = objectsOf(owners.body.yaml)[0].stringData.token;
    expect((await api('ownersProxy', 'POST', '/license/issue', { cluster: HUB })).status).toBe(200);
  });

  it('403 for a non-member of the organization, 401 without a token, 422 for a malformed body', async () => {
    expect((await api('solo', 'POST', '/user/license-proxy?org=acme', {})).status).toBe(403);
    expect((await api(undefined, 'POST', '/user/license-proxy?org=acme', {})).status).toBe(401);
    for (const body of [
      { clusterID: 'not-a-uuid' },
      { contractIDs: [contractId] },
      { contractIDs: 'all' },
      { clusterID: HUB, contractIDs: [-1] },
    ]) {
      const res = await api('olivia', 'POST', '/user/license-proxy?org=acme', body);
      expect([body, res.status]).toEqual([body, 422]);
    }
    expect((await t.send('olivia', 'POST', '/user/license-proxy?org=acme', '[1]', { 'content-type': 'application/json' })).status).toBe(
      422,
    );
  });
});

describe('license proxy installers on a self-hosted deployment', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: 'SelfHostedProduction' });
  }, 120_000);
  afterAll(() => t?.stop());

  it('answers 404', async () => {
    expect(registeredRoutesOn({ DEPLOYMENT_TYPE: 'SelfHostedProduction' }).some((r) => r.path === '/user/license-proxy')).toBe(false);
    expect((await t.api('root', 'POST', '/user/license-proxy', {})).status).toBe(404);
  });
});
