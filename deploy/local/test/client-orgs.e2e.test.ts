import { clustersV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { eventually } from '@platform/testing';
import type { DemoManifest } from '../src/demo-seed';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import type { TestPlatform } from './harness';

/**
 * Client organizations (docs/client-organizations.md) over HTTP on the demo seed: a site admin creates client
 * organizations on the demo hub (admin user, organization, imported cluster set, a shared gateway config), extends
 * and reduces them, and deletes them; removals and deletions run asynchronously and the status routes follow them to
 * `Deleted`. 400/401/403/404/409/422 on the way. In-process bus (no NATS_URL).
 */
describe('client organizations over HTTP on the demo seed', () => {
  let t: TestPlatform;
  let demo: DemoPlatform | undefined;
  let manifest: DemoManifest;
  let free: string[];
  let hubPath: string;
  const ids: Record<string, number> = {};
  const api = (...args: Parameters<TestPlatform['api']>) => t.api(...args);
  /** The demo seed's client organizations (docs/client-organizations.md), which import no cluster. */
  const DEMO_CLIENTS = ['demo-client-shared', 'demo-client-tenant'];
  const names = async () => ((await api('root', 'GET', '/user/clients')).body as { username: string }[]).map((o) => o.username);
  /** The namespaces the simulated agent reports on a spoke of the demo hub. */
  const namespacesOf = async (spoke: string) => {
    const clusters = createClient(clustersV1.ClustersServiceService, t.grpcAddress('clusters'), { name: 'clusters' });
    try {
      const uid = (await clusters.getSpoke({ hubUid: manifest.hub.uid, name: spoke })).uid;
      return (await clusters.listNamespaces({ clusterUid: uid })).namespaces.map((n) => n.name);
    } finally {
      clusters.close();
    }
  };
  const status = async (rest: string) => (await api('root', 'GET', `/user/client/${rest}`)).body.status;
  const params = (orgName: string, extra: Record<string, unknown> = {}, sets: string[] = []) => ({
    clientOrg: { orgName, orgFullName: `${orgName} Inc.` },
    hubClusterUID: manifest.hub.uid,
    hubClusterOwnerName: manifest.owner.org,
    userPermission: {
      userName: `${orgName}-admin`,
      email: `${orgName}-admin@example.com`,
      permissions: [
        ...sets.map((name) => ({
          name,
          isClusterSet: true,
          roleType: 'ClusterRole',
          roleRefName: 'open-cluster-management:managedclusterset:admin',
        })),
        { name: 'hub', isClusterSet: false, roleType: 'ClusterRole', roleRefName: 'view' },
      ],
      importCluster: sets.length > 0,
      clientOrg: true,
    },
    annotations: { tier: 'gold' },
    dbConfig: { nodeSelector: { pool: 'db' } },
    telemetryParams: { retentionDays: 30 },
    ...extra,
  });

  beforeAll(async () => {
    demo = await bootDemoPlatform({ CLIENT_ORG_CLEANUP_INTERVAL_MS: '200' });
    ({ t, manifest } = demo);
    hubPath = `/clusters/${manifest.owner.org}/${manifest.hub.name}`;
    free = ((await api('root', 'GET', `${hubPath}/available-clusters`)).body as { name: string; clusterSet: string }[])
      .filter((c) => c.clusterSet === '')
      .map((c) => c.name);
    expect(free.length).toBeGreaterThanOrEqual(2);
    expect((await api('root', 'POST', `${hubPath}/clustersets/create`, { clusterSet: 'tenant-a', clusters: [free[0]] })).status).toBe(200);
    await t.signUp('mallory');
  }, 600_000);
  afterAll(async () => {
    await demo?.stop();
  });

  it('is for site admins only (403), with a token (401)', async () => {
    expect((await api('mallory', 'GET', '/user/clients')).status).toBe(403);
    expect((await api('mallory', 'POST', '/user/client/create', params('nope', {}, ['tenant-a']))).status).toBe(403);
    expect((await api(undefined, 'GET', '/user/clients')).status).toBe(401);
    expect(await names()).toEqual(DEMO_CLIENTS);
  });

  it("the demo's shared gateway config: its client organization cannot be deleted while another uses it (400)", async () => {
    const id = manifest.sharedGatewayClientOrg!;
    expect((await api('root', 'GET', `/user/client/${id}`)).body).toMatchObject({ id, username: 'demo-client-shared' });
    expect(await api('root', 'DELETE', `/user/client/delete/${id}`)).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('demo-client-tenant') },
    });
    expect(await status('demo-client-shared/status')).toBe('Active');
  });

  it('refuses malformed (422) and invalid (400) create bodies, leaving nothing behind', async () => {
    expect((await api('root', 'POST', '/user/client/create', { clientOrg: { orgName: 'x' } })).status).toBe(422);
    expect((await api('root', 'POST', '/user/client/create', { ...params('bad'), userPermission: { userName: 'x' } })).status).toBe(422);
    const notHub = await api('root', 'POST', '/user/client/create', params('bad', { hubClusterUID: manifest.spokes[0].uid }));
    expect(notHub).toMatchObject({ status: 400, body: { message: expect.stringContaining('not a hub cluster') } });
    expect((await api('root', 'POST', '/user/client/create', params('bad', { hubClusterOwnerName: 'no-such-owner' }))).status).toBe(400);
    expect((await api('root', 'POST', '/user/client/create', params('bad', {}, ['no-such-set']))).status).toBe(400);
    expect((await api('root', 'POST', '/user/client/create', params('bad', { gatewayConfigRef: { clientOrg: 'nobody' } }))).status).toBe(
      400,
    );
    expect((await api('root', 'GET', '/orgs/bad')).status).toBe(404);
    expect(await names()).toEqual(DEMO_CLIENTS);
  });

  it('creates a client organization: its admin user owns it, the set is imported, the set leaves the client-org choices', async () => {
    expect((await api('root', 'GET', `${hubPath}/available-clustersets?type=client-org`)).body).toContain('tenant-a');
    const made = await api(
      'root',
      'POST',
      '/user/client/create',
      params('acme-client', { usableAsShared: true, gatewayConfig: { host: 'gw.acme' } }, ['tenant-a']),
    );
    expect(made).toMatchObject({ status: 200, body: { username: 'acme-client', full_name: 'acme-client Inc.' } });
    expect(made.body.managerManagementClusterEndPoint).not.toBe('');
    ids.acme = made.body.id;
    expect((await api('root', 'POST', '/user/client/create', params('acme-client'))).status).toBe(409);
    // A user's login is taken too (organizations and users share slugs).
    expect((await api('root', 'POST', '/user/client/create', params('mallory'))).status).toBe(409);
    expect(await names()).toEqual(['acme-client', ...DEMO_CLIENTS]);
    expect((await api('root', 'GET', `/user/client/${ids.acme}`)).body).toMatchObject({ id: ids.acme, username: 'acme-client' });
    expect(await status('acme-client/status')).toBe('Active');
    expect(await status(`acme-client/cluster/${free[0]}/status`)).toBe('Active');
    expect(await status(`acme-client/cluster/${free[1]}/status`)).toBe('NotFound');
    expect(await status('no-such-client/status')).toBe('NotFound');
    expect((await api('root', 'GET', `${hubPath}/available-clustersets?type=client-org`)).body).not.toContain('tenant-a');
    expect(
      (await api('root', 'GET', `${hubPath}/clustersets/tenant-a/auth-info`)).body['open-cluster-management:managedclusterset:admin'],
    ).toContain('acme-client-admin');
    // The import went to the hub's agent, which made the client's namespace on the spoke and reported it.
    await eventually(async () => (await namespacesOf(free[0])).includes('client-acme-client'), 30_000);
    // The admin user was made and owns the organization.
    expect((await api('root', 'GET', '/orgs/acme-client/members')).body.map((u: { login: string }) => u.login)).toContain(
      'acme-client-admin',
    );
  });

  it('add-cluster imports a spoke (400 when already imported, here or by another client org); delete-cluster cleans up asynchronously', async () => {
    const beta = await api(
      'root',
      'POST',
      '/user/client/create',
      params('beta-client', { gatewayConfigRef: { clientOrg: 'acme-client' } }),
    );
    expect(beta.status).toBe(200);
    ids.beta = beta.body.id;
    const hub = { hubClusterOwnerName: manifest.owner.org, hubClusterName: manifest.hub.name, hubClusterUID: manifest.hub.uid };
    const add = (spokeClusterName: string) =>
      api('root', 'POST', '/user/client/beta-client/add-cluster', { ...hub, spokeClusterName, annotations: { a: 'b' } });
    expect((await add(free[1])).status).toBe(200);
    expect(await status(`beta-client/cluster/${free[1]}/status`)).toBe('Active');
    expect(await add(free[1])).toMatchObject({ status: 400, body: { message: expect.stringContaining('already imported') } });
    expect((await add(free[0])).status).toBe(400);
    expect((await add('no-such-cluster')).status).toBe(400);
    expect((await api('root', 'POST', '/user/client/beta-client/add-cluster', { ...hub })).status).toBe(422);
    expect((await api('root', 'POST', '/user/client/no-such-client/add-cluster', { ...hub, spokeClusterName: free[1] })).status).toBe(404);
    const removed = await api('root', 'POST', '/user/client/beta-client/delete-cluster', { ...hub, spokeClusterName: free[1] });
    expect(removed.status).toBe(200);
    await eventually(async () => (await status(`beta-client/cluster/${free[1]}/status`)) === 'Deleted', 20_000);
    expect((await api('root', 'POST', '/user/client/beta-client/delete-cluster', { ...hub, spokeClusterName: free[1] })).status).toBe(404);
    expect((await api('root', 'POST', '/user/client/beta-client/delete-cluster', { hubClusterUID: 'x' })).status).toBe(422);
  });

  it('deletes asynchronously to Deleted; 400 while another client org uses its gateway config; 404 for unknown ids', async () => {
    expect(await api('root', 'DELETE', `/user/client/delete/${ids.acme}`)).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('beta-client') },
    });
    expect((await api('root', 'DELETE', '/user/client/delete/999999')).status).toBe(404);
    expect((await api('root', 'GET', '/user/client/999999')).status).toBe(404);
    expect((await api('mallory', 'DELETE', `/user/client/delete/${ids.beta}`)).status).toBe(403);
    expect((await api('root', 'DELETE', `/user/client/delete/${ids.beta}`)).status).toBe(200);
    await eventually(async () => (await status('beta-client/status')) === 'Deleted', 20_000);
    expect((await api('root', 'GET', `/user/client/${ids.beta}`)).status).toBe(404);
    expect((await api('root', 'GET', '/orgs/beta-client')).status).toBe(404);
    // Now nothing references acme's gateway config.
    expect((await api('root', 'DELETE', `/user/client/delete/${ids.acme}`)).status).toBe(200);
    expect(['Deleting', 'Deleted']).toContain(await status('acme-client/status'));
    await eventually(async () => (await status('acme-client/status')) === 'Deleted', 20_000);
    // The agent tore the client's namespace down.
    await eventually(async () => !(await namespacesOf(free[0])).includes('client-acme-client'), 30_000);
    expect(await status(`acme-client/cluster/${free[0]}/status`)).toBe('Deleted');
    expect(await names()).toEqual(DEMO_CLIENTS);
    // Its set is free for a client organization again.
    expect((await api('root', 'GET', `${hubPath}/available-clustersets?type=client-org`)).body).toContain('tenant-a');
  });
});
