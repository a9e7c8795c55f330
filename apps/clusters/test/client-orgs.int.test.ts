import { randomUUID } from 'node:crypto';
import { UnavailableError } from '@platform/errors';
import { clustersV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { clustersApp } from '../src/app';
import { ClientOrgs } from '../src/client-orgs/client-orgs';
import { ClusterSets } from '../src/cluster-sets/cluster-sets';
import { DESIRED_STATE_EFFECT } from '../src/desired-state/desired-state';
import { Relationships, TUPLES_EFFECT } from '../src/inventory/tuples';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { hubRequest } from './hub-request';

// The client-org lifecycle against real Postgres and a stand-in authz: imports write the client org's owner tuple,
// removals and deletions wait for the cleanup pass, and an organization orgs-teams will not delete is Partially
// Deleted until a later pass succeeds.

describe('client organizations: records and asynchronous cleanup', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let clusters: PromiseClient<typeof clustersV1.ClustersServiceService>;
  let hub: clustersV1.Cluster;
  let orgs: ClientOrgs;
  let relationships: Relationships;
  const orgsTeams = { down: false, deleted: [] as number[] };
  const db = () => app.running.ctx.db!;
  const spokeUid = randomUUID();
  const tuple = (org: number, uid: string) => `organization:${org} owner cluster:${uid}`;

  beforeAll(async () => {
    authz = await startAuthzStub();
    // The app's own cleanup timer is slowed down: the test runs the passes itself.
    app = await startAppForTest(clustersApp, { AUTHZ_GRPC_ADDR: authz.address, CLIENT_ORG_CLEANUP_INTERVAL_MS: '600000' });
    clusters = createClient(clustersV1.ClustersServiceService, app.address, { name: 'clusters' });
    hub = await clusters.createHub(hubRequest(51, 'hub', { managerEndpoint: 'https://mcm.example.com' }));
    await db().table('clusters').insert({ uid: spokeUid, hub_id: hub.id, owner_type: 'organization', owner_id: 51, name: 'spoke-a' });
    // An outbox of the test's own with the app's effects: tuples to the stand-in authz; desired states nowhere.
    relationships = new Relationships(authz.address);
    const outbox = app.running.ctx.outbox({
      [TUPLES_EFFECT]: relationships.effect(),
      [DESIRED_STATE_EFFECT]: { apply: async () => undefined },
    });
    orgs = new ClientOrgs(db(), outbox, {
      deleteOrg: async (req) => {
        if (orgsTeams.down) throw new UnavailableError('orgs-teams is down');
        orgsTeams.deleted.push(req.orgId);
        return {};
      },
    });
    await new ClusterSets(db(), outbox).create({ hubUid: hub.uid, name: 'tenant', clusters: ['spoke-a'], actor: 'root' });
  });
  afterAll(async () => {
    clusters?.close();
    relationships?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  const create = (extra: Record<string, unknown> = {}) =>
    orgs.create({
      orgId: 900,
      name: 'client',
      hubUid: hub.uid,
      adminUserId: 7,
      adminLogin: 'client-admin',
      importSets: ['tenant'],
      roleRefs: ['tenant/open-cluster-management:managedclusterset:admin', 'hub/admin'],
      settingsJson: '{}',
      gatewayConfigRef: '',
      usableAsShared: false,
      requesterId: 1,
      validateOnly: false,
      ...extra,
    });

  it('a dry run records nothing; a create imports the set and writes the owner and hub tuples', async () => {
    await create({ validateOnly: true });
    expect(await db().table('client_orgs').count({ n: '*' })).toEqual([{ n: 0 }]);
    const made = await create();
    expect(made).toMatchObject({ name: 'client', status: 'Active', clusters: [{ name: 'spoke-a', uid: spokeUid, status: 'Active' }] });
    expect([...authz.tuples.keys()]).toEqual(
      expect.arrayContaining([tuple(900, spokeUid), `user:7 view cluster:${hub.uid}`, `user:7 manage cluster:${hub.uid}`]),
    );
    await expect(create()).rejects.toMatchObject({ kind: 'conflict' });
    await expect(create({ orgId: 901, name: 'other' })).rejects.toMatchObject({
      kind: 'input',
      message: expect.stringContaining('already imported'),
    });
  });

  it('a deletion is Deleting until a pass; Partially Deleted while orgs-teams is down; Deleted after', async () => {
    await orgs.delete(900, 1);
    expect(await orgs.status('client', '')).toBe('Deleting');
    orgsTeams.down = true;
    await orgs.cleanup();
    expect(await orgs.status('client', 'spoke-a')).toBe('Deleted');
    expect(await orgs.status('client', '')).toBe('Partially Deleted');
    expect([...authz.tuples.keys()]).not.toContain(tuple(900, spokeUid));
    orgsTeams.down = false;
    await orgs.cleanup();
    expect(await orgs.status('client', '')).toBe('Deleted');
    expect(orgsTeams.deleted).toEqual([900]);
    expect([...authz.tuples.keys()]).not.toContain(`user:7 view cluster:${hub.uid}`);
    await expect(orgs.get(900, '')).rejects.toMatchObject({ kind: 'not-found' });
    expect(await orgs.status('never', '')).toBe('NotFound');
  });

  it('imports a spoke of the hub once, removes it by a pass; keeps a gateway config another uses; a deleted one’s set is free again', async () => {
    await db().table('clusters').insert({ uid: randomUUID(), hub_id: hub.id, owner_type: 'organization', owner_id: 51, name: 'spoke-b' });
    await expect(create({ orgId: 910, name: 'x', hubUid: spokeUid })).rejects.toThrow(`hubClusterUID ${spokeUid} is not a hub cluster`);
    await expect(create({ orgId: 910, name: 'x', importSets: ['nope'] })).rejects.toThrow('cluster set nope does not exist on hub hub');
    // The set client 900 imported is free again now that it is deleted.
    await create({ orgId: 910, name: 'sharing', usableAsShared: true });
    await create({ orgId: 911, name: 'user', importSets: [], gatewayConfigRef: 'sharing' });
    await expect(create({ orgId: 912, name: 'x', importSets: [], gatewayConfigRef: 'user' })).rejects.toMatchObject({ kind: 'input' });

    const add = (clientOrg: string, spokeClusterName: string) =>
      orgs.addCluster({ clientOrg, hubUid: hub.uid, spokeClusterName, settingsJson: '{}' });
    await add('user', 'spoke-b');
    expect(await orgs.status('user', 'spoke-b')).toBe('Active');
    await expect(add('user', 'spoke-b')).rejects.toThrow('cluster spoke-b is already imported');
    await expect(add('user', 'spoke-a')).rejects.toThrow('cluster spoke-a is already imported by another client organization');
    await expect(add('user', 'nope')).rejects.toThrow('nope is not a managed cluster of the hub');
    await expect(add('never', 'spoke-b')).rejects.toMatchObject({ kind: 'not-found' });
    const remove = () => orgs.removeCluster({ clientOrg: 'user', hubUid: hub.uid, spokeClusterName: 'spoke-b' });
    await remove();
    expect(await orgs.status('user', 'spoke-b')).toBe('Deleting');
    await orgs.cleanup();
    expect(await orgs.status('user', 'spoke-b')).toBe('Deleted');
    await expect(remove()).rejects.toMatchObject({ kind: 'not-found' });

    await expect(orgs.delete(910, 1)).rejects.toThrow('client organization sharing is still referenced by the gateway config of user');
    await expect(orgs.delete(999_999, 1)).rejects.toMatchObject({ kind: 'not-found' });
    await orgs.delete(911, 1);
    await orgs.cleanup();
    await orgs.delete(910, 1);
    await orgs.cleanup();
    expect([await orgs.status('user', ''), await orgs.status('sharing', '')]).toEqual(['Deleted', 'Deleted']);
  });
});
