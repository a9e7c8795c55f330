import { fromPublic, fromSeed } from 'nkeys.js';
import { authzV1, clustersV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * Enrolling hub clusters over HTTP (beyond the spec, docs/clusters.md): POST /orgs/{org}/clusters by an owner
 * or a holder of create:cluster makes the hub, its owner tuple and a bus account whose seed is answered once;
 * GET lists the organization's hubs for its members.
 */
describe('cluster enrollment over HTTP', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  let acme: number;

  beforeAll(async () => {
    harness = await bootTestPlatform();
    for (const name of ['olivia', 'mia', 'nora', 'otto']) await harness.signUp(name);
    const org = await api('olivia', 'POST', '/orgs', { username: 'acme' });
    expect(org.status).toBe(201);
    acme = org.body.id;
    expect((await api('otto', 'POST', '/orgs', { username: 'globex' })).status).toBe(201);
    // mia: a plain member (team readers); nora: team enrollers, which holds a custom role with create:cluster.
    for (const [team, member] of [
      ['readers', 'mia'],
      ['enrollers', 'nora'],
    ]) {
      const created = await api('olivia', 'POST', '/orgs/acme/teams', { name: team, type: 'general', permission: 'read' });
      expect(created.status).toBe(201);
      expect((await api('olivia', 'PUT', `/teams/${created.body.id}/members/${member}`)).status).toBe(204);
      if (team === 'enrollers') {
        const role = await api('olivia', 'POST', '/authz/roles?org=acme', {
          name: 'Enrollers',
          permissions: [{ namespace: 'cluster', action: 'create' }],
          teamIDs: [created.body.id],
        });
        expect(role.status).toBe(201);
      }
    }
  }, 120_000);
  afterAll(() => harness?.stop());

  const UID = '3d5e7f90-1a2b-4c3d-9e8f-0a1b2c3d4e5f';
  const GLOBEX_UID = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';

  it('enrolls a hub: 201 with the cluster and bus credentials shown once, the owner tuple written', async () => {
    const res = await api('olivia', 'POST', '/orgs/acme/clusters', {
      name: 'prod-east',
      uid: UID,
      displayName: 'Production East',
      provider: 'aws',
      kubernetesVersion: 'v1.30.2',
      nodeCount: 6,
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
      managerEndpoint: 'https://mcm.example.com',
    });
    expect(res.status).toBe(201);
    expect(res.body.cluster).toEqual({
      uid: UID,
      name: 'prod-east',
      displayName: 'Production East',
      provider: 'aws',
      kubernetesVersion: 'v1.30.2',
      nodeCount: 6,
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
      managerEndpoint: 'https://mcm.example.com',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      hubUID: '',
      features: [],
      // Users connected by team auto-connect, as the agent reports them (docs/organizations-and-teams.md): none yet.
      connectedUsers: [],
    });
    // The seed is a real NATS user seed whose public key is the bus account's.
    const { bus } = res.body;
    expect(fromPublic(bus.publicKey).getPublicKey()).toBe(bus.publicKey);
    expect(fromSeed(new TextEncoder().encode(bus.seed)).getPublicKey()).toBe(bus.publicKey);
    // The account is the one the bus-token routes list, issued for the cluster; the seed is never listed.
    const accounts = await api('olivia', 'GET', '/orgs/acme/tokens/bus-tokens/');
    expect(accounts.body).toEqual([
      expect.objectContaining({ id: bus.accountID, busPubKey: bus.publicKey, clusterID: UID, revoked: false }),
    ]);
    expect(JSON.stringify(accounts.body)).not.toContain(bus.seed);

    // Ownership is an authz tuple on cluster:<uid>: acme's members see it, globex's owner does not.
    const authz = createClient(authzV1.AuthzServiceService, harness.grpcAddress('authz'), { name: 'authz' });
    try {
      const sees = async (login: string) =>
        (
          await authz.check({
            tuple: { user: `user:${harness.ids[login]}`, relation: 'view', object: `cluster:${UID}` },
            contextualTuples: [],
          })
        ).allowed;
      expect(await sees('mia')).toBe(true);
      expect(await sees('otto')).toBe(false);
    } finally {
      authz.close();
    }
  });

  it('lets a holder of create:cluster enroll, and refuses plain members and strangers with 403', async () => {
    const byNora = await api('nora', 'POST', '/orgs/acme/clusters', { name: 'edge' });
    expect(byNora.status).toBe(201);
    expect(byNora.body.cluster.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect((await api('mia', 'POST', '/orgs/acme/clusters', { name: 'sneaky' })).status).toBe(403);
    expect((await api('otto', 'POST', '/orgs/acme/clusters', { name: 'sneaky' })).status).toBe(403);
    expect((await api(undefined, 'POST', '/orgs/acme/clusters', { name: 'sneaky' })).status).toBe(401);
    expect((await api('olivia', 'POST', '/orgs/nowhere/clusters', { name: 'sneaky' })).status).toBe(404);
    // A site admin may too.
    expect((await api('root', 'POST', '/orgs/acme/clusters', { name: 'by-admin' })).status).toBe(201);
  });

  it('answers 409 for a name the organization has, without issuing a bus account, and allows it in another organization', async () => {
    const before = (await api('olivia', 'GET', '/orgs/acme/tokens/bus-tokens/')).body.length;
    const dup = await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'prod-east' });
    expect(dup).toEqual({ status: 409, body: { message: 'a cluster named "prod-east" already exists', url: expect.any(String) } });
    expect((await api('olivia', 'GET', '/orgs/acme/tokens/bus-tokens/')).body).toHaveLength(before);
    expect((await api('otto', 'POST', '/orgs/globex/clusters', { name: 'prod-east', uid: GLOBEX_UID })).status).toBe(201);
  });

  it("refuses a uid another organization's hub has (or its own) with 409 naming no one, before any bus account is issued", async () => {
    const accounts = async (login: string, org: string) => (await api(login, 'GET', `/orgs/${org}/tokens/bus-tokens/`)).body as unknown[];
    const acmeBefore = await accounts('olivia', 'acme');
    const globexBefore = await accounts('otto', 'globex');

    const theirs = await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'borrowed', uid: GLOBEX_UID.toUpperCase() });
    expect(theirs.status).toBe(409);
    const ours = await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'again', uid: UID });
    expect(ours.status).toBe(409);
    // The same words whoever holds the uid, and nothing that says who: no organization, owner or cluster name.
    expect(theirs.body.message.replace(GLOBEX_UID, '<uid>')).toBe(ours.body.message.replace(UID, '<uid>'));
    expect(theirs.body.message).toBe(`a cluster with uid ${GLOBEX_UID} already exists`);
    for (const leak of ['globex', 'otto', 'prod-east', 'organization', 'owner']) expect(theirs.body.message).not.toContain(leak);

    // Nothing was made for the refused enrollments: neither organization has a new (even revoked) bus account.
    expect(await accounts('olivia', 'acme')).toEqual(acmeBefore);
    expect(await accounts('otto', 'globex')).toEqual(globexBefore);
    expect((await api('olivia', 'GET', '/orgs/acme/clusters')).body.map((c: { name: string }) => c.name)).not.toContain('borrowed');
  });

  it('answers 400 for a bad name or body', async () => {
    for (const name of ['Prod', 'a_b', '-x', 'x'.repeat(64), '', 7]) {
      const res = await api('olivia', 'POST', '/orgs/acme/clusters', { name });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^invalid cluster/);
    }
    expect((await api('olivia', 'POST', '/orgs/acme/clusters', {})).status).toBe(400);
    expect((await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'ok', uid: 'nope' })).status).toBe(400);
    expect((await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'ok', status: [1] })).status).toBe(400);
    expect((await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'ok', nodeCount: -1 })).status).toBe(400);
    expect((await api('olivia', 'GET', '/orgs/acme/clusters')).body.map((c: { name: string }) => c.name)).not.toContain('ok');
  });

  it("lists the organization's hubs for its members (and site admins) only", async () => {
    const listed = await api('mia', 'GET', '/orgs/acme/clusters');
    expect(listed.status).toBe(200);
    expect(listed.body.map((c: { name: string }) => c.name)).toEqual(['by-admin', 'edge', 'prod-east']);
    expect(listed.body[2]).toMatchObject({ uid: UID, provider: 'aws', nodeCount: 6 });
    expect((await api('otto', 'GET', '/orgs/acme/clusters')).status).toBe(403);
    expect((await api('root', 'GET', '/orgs/acme/clusters')).status).toBe(200);
    expect((await api('otto', 'GET', '/orgs/globex/clusters')).body.map((c: { name: string }) => c.name)).toEqual(['prod-east']);
    expect((await api('olivia', 'GET', '/orgs/nowhere/clusters')).status).toBe(404);
    expect((await api(undefined, 'GET', '/orgs/acme/clusters')).status).toBe(401);
    // What the route answers is what the inventory holds.
    const clusters = createClient(clustersV1.ClustersServiceService, harness.grpcAddress('clusters'), { name: 'clusters' });
    try {
      expect((await clusters.getCluster({ uid: UID })).ownerId).toBe(acme);
    } finally {
      clusters.close();
    }
  });
});
