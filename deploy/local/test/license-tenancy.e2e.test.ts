import { formOf, bootTestPlatform, type TestPlatform } from './harness';

/**
 * One tenant never gets a license for, or binds to its contracts, a cluster another tenant enrolled
 * (docs/licensing.md, "Whose cluster"): not through the user rows, the admin rows, `POST /license/issue`,
 * a cluster UUID taken before its owner enrolled it, or `/register` (which takes a cluster nobody enrolled that the
 * license owner's contract binds); and no answer or audit event of the other
 * tenant's contracts carries its names. Also: unbinding, renaming and retagging take the relation binding takes,
 * and a contract's name is bounded like every other text.
 */

const NOW = Math.floor(Date.now() / 1000);
const YEAR = 365 * 24 * 3600;
const HUB_A = '3c1f9a2e-7b4d-4e6f-8a1b-2c3d4e5f6a70';
/** A UUID org bravo binds and licenses before org alpha enrolls a hub with it. */
const TAKEN_LATER = '3c1f9a2e-7b4d-4e6f-8a1b-2c3d4e5f6a71';
const NOBODYS = '3c1f9a2e-7b4d-4e6f-8a1b-2c3d4e5f6a72';
/** UUIDs nobody enrolls: bravo licenses the first offline. */
const UNKNOWN = '3c1f9a2e-7b4d-4e6f-8a1b-2c3d4e5f6a73';
const UNKNOWN_2 = '3c1f9a2e-7b4d-4e6f-8a1b-2c3d4e5f6a74';

describe('licenses and contract bindings stay within their tenant (hosted)', () => {
  let t: TestPlatform;
  let contractB: number;

  const createContract = async (org: string, fields: Record<string, string> = {}) => {
    const created = await t.send('root', 'POST', `/contracts?org=${org}`, formOf({ products: 'productdb', end: String(NOW + YEAR), features: JSON.stringify(['postgres']), ...fields }));
    expect(created.status).toBe(201);
    return created.body[0].id as number;
  };
  const clustersOf = async (contract: number) =>
    (await t.api('bob', 'GET', `/user/contracts/${contract}/clusters?org=bravo`)).body as {
      id: number;
      cluster: string;
      clusterStatus: { name: string; isImported: boolean };
    }[];
  /** Nothing of alpha's appears in a text: not its name, not its hub's. */
  const alphaFree = (text: unknown) => {
    expect(JSON.stringify(text)).not.toMatch(/alpha|secret-prod/);
  };

  beforeAll(async () => {
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: 'Hosted' });
    for (const who of ['alice', 'bob', 'reader']) await t.signUp(who);
    expect((await t.api('alice', 'POST', '/orgs', { username: 'alpha' })).status).toBe(201);
    expect((await t.api('bob', 'POST', '/orgs', { username: 'bravo' })).status).toBe(201);
    expect((await t.api('alice', 'POST', '/orgs/alpha/clusters', { name: 'secret-prod', uid: HUB_A })).status).toBe(201);
    contractB = await createContract('bravo', { allowOffline: 'true' });
  }, 120_000);
  afterAll(() => t?.stop());

  it('refuses to bind another tenant’s enrolled cluster: user assign and bind rows, and the admin row', async () => {
    const assigned = await t.api('bob', 'POST', '/user/contracts/assign-cluster?org=bravo', { clusterId: HUB_A, contractIds: [contractB] });
    expect(assigned.status).toBe(403);
    alphaFree(assigned.body);
    const bound = await t.api('bob', 'POST', `/user/contracts/${contractB}/clusters?org=bravo`, [{ cluster: HUB_A }]);
    expect(bound.status).toBe(403);
    alphaFree(bound.body);
    const byAdmin = await t.api('root', 'POST', `/contracts/${contractB}/clusters?org=bravo`, [{ cluster: HUB_A }]);
    expect(byAdmin.status).toBe(403);
    expect(await clustersOf(contractB)).toEqual([]);
    const audit = await t.api('bob', 'GET', `/user/contracts/${contractB}/audit?org=bravo`);
    expect(audit.status).toBe(200);
    alphaFree(audit.body);
    expect(JSON.stringify(audit.body)).not.toContain(HUB_A);
  });

  it('answers POST /license/issue for another tenant’s cluster as for a cluster no contract covers, binding nothing', async () => {
    // bob's own account has a contract that would take any new cluster on by itself.
    const own = await createContract('bob', { allowOffline: 'true', autoAssignCluster: 'true' });
    const refused = await t.api('bob', 'POST', '/license/issue', { cluster: HUB_A });
    expect(refused.status).toBe(404);
    expect(refused.body.message).toBe(`no active contract of the account covers cluster ${HUB_A}`);
    expect((await t.api('bob', 'GET', `/user/contracts/${own}/clusters`)).body).toEqual([]);
    // A cluster nobody enrolled is still the account's to license offline.
    expect((await t.api('bob', 'POST', '/license/issue', { cluster: NOBODYS })).status).toBe(200);
  });

  it('shows no other tenant’s cluster name in a cluster status', async () => {
    const status = await t.api('bob', 'GET', `/user/contracts/active/associated-clusters/${HUB_A}/status?org=bravo`);
    expect(status.status).toBe(200);
    expect(status.body.clusterStatus).toMatchObject({ isImported: false, name: '' });
    const batch = await t.api('bob', 'POST', '/user/contracts/active/associated-clusters/batch-status?org=bravo', { clusters: [HUB_A] });
    expect(batch.status).toBe(200);
    alphaFree(batch.body);
    // Its owner sees it as its own.
    const own = await t.api('alice', 'GET', `/user/contracts/active/associated-clusters/${HUB_A}/status?org=alpha`);
    expect(own.body.clusterStatus).toMatchObject({ isImported: true, name: 'secret-prod' });
  });

  it('stops licensing a UUID taken before its owner enrolled it, and /register refuses the earlier license as unknown', async () => {
    const bound = await t.api('bob', 'POST', `/user/contracts/${contractB}/clusters?org=bravo`, [{ cluster: TAKEN_LATER }]);
    expect(bound.status).toBe(201);
    const ccId = (bound.body as { id: number }[])[0].id;
    const issue = `/user/contracts/${contractB}/clusters/${ccId}/issue-license?org=bravo`;
    const early = await t.api('bob', 'POST', issue);
    expect(early.status).toBe(200);
    const register = (license: string) =>
      t.api(undefined, 'POST', '/register', { clusterUID: TAKEN_LATER, features: 'postgres', license });

    // The real owner enrolls its cluster under that UUID.
    expect((await t.api('alice', 'POST', '/orgs/alpha/clusters', { name: 'late', uid: TAKEN_LATER })).status).toBe(201);

    const again = await t.api('bob', 'POST', issue);
    expect(again.status).toBe(403);
    alphaFree(again.body);
    // Nor through an offline license proxy installer, which issues from the same binding.
    const proxy = await t.api('bob', 'POST', '/user/license-proxy?org=bravo', { clusterID: TAKEN_LATER, contractIDs: [contractB] });
    expect(proxy.status).toBe(403);
    alphaFree(proxy.body);
    const registered = await register(early.body.license);
    expect(registered.status).toBe(400);
    expect(registered.body.message).toBe(`cluster ${TAKEN_LATER} is not registered with the platform`);
    // bravo's binding shows only what bravo gave it.
    const listed = (await clustersOf(contractB)).find((c) => c.cluster === TAKEN_LATER)!;
    expect(listed.clusterStatus).toMatchObject({ isImported: false, name: '' });

    // alpha's own license for its cluster registers.
    const contractA = await createContract('alpha');
    const mine = await t.api('root', 'POST', `/contracts/${contractA}/clusters?org=alpha`, [{ cluster: TAKEN_LATER }]);
    expect(mine.status).toBe(201);
    const license = await t.api('alice', 'POST', `/user/contracts/${contractA}/clusters/${mine.body[0].id}/issue-license?org=alpha`);
    expect(license.status).toBe(200);
    expect((await register(license.body.license)).status).toBe(200);
  });

  it('registers a cluster the owner’s contract binds though it never enrolled; a bad license is 422 whatever the cluster; a cluster the owner does not have is 400', async () => {
    const bound = await t.api('bob', 'POST', `/user/contracts/${contractB}/clusters?org=bravo`, [{ cluster: UNKNOWN }]);
    expect(bound.status).toBe(201);
    const ccId = (bound.body as { id: number; cluster: string }[]).find((c) => c.cluster === UNKNOWN)!.id;
    const offline = await t.api('bob', 'POST', `/user/contracts/${contractB}/clusters/${ccId}/issue-license?org=bravo`);
    expect(offline.status).toBe(200);
    const der = Buffer.from(offline.body.license, 'base64');
    const tampered = Buffer.from(der);
    tampered[tampered.length - 12] ^= 1;
    const register = (clusterUID: string, license: string, features = 'postgres') =>
      t.api(undefined, 'POST', '/register', { clusterUID, features, license });

    // Air-gapped: bound by bravo's contract, never enrolled over the bus; its offline license registers.
    expect((await register(UNKNOWN, offline.body.license)).status).toBe(200);
    // The license is read first: tampered, garbage, or another cluster's is 422 for any cluster, known or not.
    for (const [clusterUID, license] of [
      [UNKNOWN, tampered.toString('base64')],
      [UNKNOWN, 'AAAA'],
      [UNKNOWN_2, offline.body.license],
      [UNKNOWN.toUpperCase(), 'AAAA'],
      [HUB_A, tampered.toString('base64')],
      [HUB_A, offline.body.license],
    ] as const)
      expect({ clusterUID, status: (await register(clusterUID, license)).status }).toEqual({ clusterUID, status: 422 });
    // Empty features are still refused first; a body without a license is still malformed (422).
    expect((await register(UNKNOWN, 'AAAA', ' ')).body.message).toMatch(/^features/);
    expect((await t.api(undefined, 'POST', '/register', { clusterUID: UNKNOWN, features: 'postgres' })).status).toBe(422);
    // Unbound, no contract of bravo binds it any more: the answer for a cluster the platform does not know.
    expect((await t.api('bob', 'DELETE', `/user/contracts/${contractB}/clusters/${ccId}?org=bravo`)).status).toBe(200);
    const unknown = await register(UNKNOWN, offline.body.license);
    expect([unknown.status, unknown.body.message]).toEqual([400, `cluster ${UNKNOWN} is not registered with the platform`]);
    const doc = (await t.api(undefined, 'GET', '/openapi.json')).body;
    expect(doc.paths['/register'].post.responses['400'].description).toMatch(/no contract of the license’s owner binds or another account enrolled/);
  });

  it('lets only holders of add_cluster:contract_mgmt unbind, rename and retag; a read-only member changes nothing', async () => {
    const readers = await t.api('bob', 'POST', '/orgs/bravo/teams', { name: 'readers', type: 'general', permission: 'read' });
    expect(readers.status).toBe(201);
    expect((await t.api('bob', 'PUT', `/teams/${readers.body.id}/members/reader`)).status).toBe(204);
    const bound = await t.api('bob', 'POST', `/user/contracts/${contractB}/clusters?org=bravo`, [{ cluster: NOBODYS }]);
    expect(bound.status).toBe(201);
    const cc = `/user/contracts/${contractB}/clusters/${bound.body.find((c: { cluster: string }) => c.cluster === NOBODYS).id}`;
    expect((await t.api('reader', 'PATCH', `${cc}/name?org=bravo`, { clusterName: 'mine-now' })).status).toBe(403);
    expect((await t.api('reader', 'PATCH', `${cc}/tags?org=bravo`, { tags: ['x'] })).status).toBe(403);
    expect((await t.api('reader', 'DELETE', `${cc}?org=bravo`)).status).toBe(403);
    expect((await clustersOf(contractB)).map((c) => c.cluster)).toContain(NOBODYS);
    expect((await t.api('bob', 'PATCH', `${cc}/name?org=bravo`, { clusterName: 'renamed' })).status).toBe(200);
    expect((await t.api('bob', 'DELETE', `${cc}?org=bravo`)).status).toBe(200);
    expect((await clustersOf(contractB)).map((c) => c.cluster)).not.toContain(NOBODYS);
  });

  it('refuses a contract name with a NUL or over 255 characters with 400, on create and on update', async () => {
    for (const name of ['a\u0000b', 'n'.repeat(256)]) {
      const created = await t.send('root', 'POST', '/contracts?org=bravo', formOf({ products: 'productdb', end: String(NOW + YEAR), name }));
      expect([400, 422]).toContain(created.status);
      const updated = await t.send('root', 'PUT', `/contracts/${contractB}`, formOf({ name }));
      expect([400, 422]).toContain(updated.status);
    }
    expect((await t.api('root', 'GET', `/contracts/${contractB}`)).body.name).not.toMatch(/^n{256}$/);
    const fine = await t.send('root', 'PUT', `/contracts/${contractB}`, formOf({ name: 'n'.repeat(255) }));
    expect(fine.status).toBe(200);
  });
});
