import { NotFoundError } from '@platform/errors';
import { clustersV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { fakeOrgAndCaller, startFakeBackends, type FakeBackends, type Holds } from './fake-backends';
import { startTestGateway, type TestGateway } from './test-gateway';

// The stand-in backends of the metrics-proxy rows' tests: two organizations with their clusters in the inventory,
// their owners and a member, and metricsproxy answering registrations.

export const ACME = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme', visibility: 'public' });
export const OTHER = orgsTeamsOrgsV1.Organization.fromPartial({ id: 20, username: 'other', visibility: 'public' });
const user = (id: number, login: string, isAdmin = false) => orgsTeamsV1.User.fromPartial({ id, login, active: true, isAdmin });
/** olivia owns acme, bob is a member of it, mallory owns other, root is a site admin and nothing in acme. */
const USERS = [user(1, 'olivia'), user(2, 'bob'), user(3, 'mallory'), user(4, 'root', true)];
export const PROD = '0b7d4c1e-5f0a-4c5e-9d7b-2a1f6e3c9b10';
export const EDGE = '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5';
export const THEIRS = '6a1d3c0e-1111-4c5e-9d7b-2a1f6e3c9b10';
export const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const cluster = (uid: string, name: string, ownerId: number, hubUid = '') =>
  clustersV1.Cluster.fromPartial({ uid, name, ownerType: 'organization', ownerId, hubUid });
const CLUSTERS = [cluster(PROD, 'prod', ACME.id), cluster(EDGE, 'edge', ACME.id), cluster(THEIRS, 'theirs', OTHER.id)];

/** A gateway on stand-ins for the organizations, users and clusters above, metricsproxy answering registrations. */
export async function startMetricsProxyStandIns(): Promise<{ backends: FakeBackends; gateway: TestGateway; close(): Promise<void> }> {
  // olivia and mallory own their organizations; bob is a member of acme and may do nothing more.
  const holds: Holds = (userId, permission, objectId) =>
    (userId === 1 && objectId === ACME.id) ||
    (userId === 3 && objectId === OTHER.id) ||
    (userId === 2 && objectId === ACME.id && permission === 'member:org');
  const callers = fakeOrgAndCaller(USERS, [ACME, OTHER], holds);
  const backends = await startFakeBackends({
    ...callers,
    orgsTeams: {
      ...callers.orgsTeams,
      identity: {
        ...callers.orgsTeams.identity,
        getAccounts: async ({ ids }) => ({
          users: [ACME, OTHER].filter((o) => ids.includes(o.id)).map((o) => ({ ...user(o.id, o.username), type: 1 })),
        }),
      },
    },
    clusters: {
      clusters: {
        getCluster: async ({ uid }) => {
          const found = CLUSTERS.find((c) => c.uid === uid.toLowerCase());
          if (!found) throw new NotFoundError(`cluster ${uid} not found`);
          return found;
        },
        getClusters: async ({ uids }) => ({ clusters: CLUSTERS.filter((c) => uids.includes(c.uid)) }),
      },
    },
    metricsproxy: {
      metricsproxy: {
        registerFlavorA: async ({ context }) => ({
          folderId: 3,
          folderUid: `org-${context!.ownerId}`,
          datasource: `${context!.ownerId}.${context!.clusterUid}`,
          datasourceUid: 'mp-1',
          url: 'https://from-metricsproxy.example',
        }),
        registerFlavorB: async ({ context }) => ({
          projectName: `org-${context!.ownerId}`,
          folderName: context!.ownerName,
          datasource: `${context!.ownerId}.${context!.clusterUid}`,
          url: 'https://from-metricsproxy.example',
        }),
      },
    },
  });
  const gateway = await startTestGateway(backends.env);
  return {
    backends,
    gateway,
    close: async () => {
      gateway.close();
      await backends.close();
    },
  };
}
