import { InputError } from '@platform/errors';
import type { clustersV1, licensedV1, orgsTeamsV1 } from '@platform/proto';
import { loadConfig } from '@platform/service-kit';
import { gatewayEnv } from '../src/config';
import type { EdgeContext } from '../src/route';
import { licensedRoutes } from '../src/sections/dashboard/licensed';

/**
 * A user who reported from more clusters than the backends take in one batch call (GetClusters and
 * CountClusterContracts: at most 1,000 cluster UIDs) still gets every cluster from "a user's clusters" and "a user's
 * active clusters". The handlers run against stand-in backends that keep the real services' limits.
 */
describe("the dashboard's lists of a user's clusters, for a user with more than 1,000 clusters", () => {
  const USER = 7;
  const OWNER = 70;
  const CLUSTERS = 2_345;
  const uidOf = (i: number) => `0c000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  // Billing's answer: latest report first.
  const entries: licensedV1.LicensedEntry[] = Array.from({ length: CLUSTERS }, (_, i) => ({
    userId: USER,
    clusterUid: uidOf(CLUSTERS - i),
    licenseId: '',
    product: '',
    firstReceivedUnix: 1_790_000_000 + i,
    lastReceivedUnix: 1_800_000_000 - i,
    products: [],
    clusterUids: [],
  }));
  // Every third cluster is bound by (its number mod 4) active contracts; the inventory knows all but the last ten.
  const contracts = (uid: string) => (Number(uid.slice(-12)) % 3 === 0 ? Number(uid.slice(-12)) % 4 : 0);
  const known = (uid: string) => Number(uid.slice(-12)) <= CLUSTERS - 10;
  const calls = { getClusters: 0, countClusterContracts: 0 };

  const ctx = {
    config: loadConfig(gatewayEnv, { LOG_LEVEL: 'silent' }),
    // Every read these rows make is a kept one (the backends' read models).
    kept: {
      billingDashboard: {
        licensed: {
          listUserClusters: async (q: licensedV1.LicensedQuery) => ({ entries: q.userId === USER ? entries : [] }),
        },
      },
      clusters: {
        clusters: {
          getClusters: async ({ uids }: { uids: string[] }) => {
            calls.getClusters++;
            if (uids.length > 1000) throw new InputError('at most 1000 cluster UIDs at a time');
            return {
              clusters: uids.filter(known).map(
                (uid) =>
                  ({
                    id: Number(uid.slice(-12)),
                    uid,
                    name: `c-${Number(uid.slice(-12))}`,
                    displayName: '',
                    ownerId: OWNER,
                    provider: 'aws',
                    kubernetesVersion: '1.31',
                    nodeCount: 3,
                    createdUnix: 1_780_000_000,
                    statusJson: '{}',
                  }) as Partial<clustersV1.Cluster>,
              ),
            };
          },
        },
      },
      contractsLicensing: {
        contracts: {
          countClusterContracts: async ({ clusters }: { clusters: string[] }) => {
            calls.countClusterContracts++;
            if (clusters.length > 1000) throw new InputError('at most 1000 clusters at a time');
            return { counts: Object.fromEntries(clusters.map((c) => [c, contracts(c)])) };
          },
        },
      },
      orgsTeams: {
        identity: {
          getAccounts: async ({ ids }: { ids: number[] }) => ({
            users: ids.map((id) => ({ id, login: id === USER ? 'alice' : 'acme' }) as Partial<orgsTeamsV1.User>),
          }),
        },
      },
    },
  } as unknown as EdgeContext;

  const row = (path: string) => {
    const found = licensedRoutes.find((r) => r.method === 'get' && r.path === path);
    if (!found) throw new Error(`no row ${path}`);
    return found;
  };

  beforeEach(() => {
    calls.getClusters = 0;
    calls.countClusterContracts = 0;
  });

  it("lists every one of the user's clusters, in billing's order, as the inventory has them", async () => {
    const { body } = (await row('/dashboard/users/:uid/clusters/').handle(
      { params: { uid: USER }, query: {}, body: undefined },
      ctx as never,
    )) as {
      body: { uid: string; name: string; ownerName: string; nodeCount: number }[];
    };
    expect(body.map((c) => c.uid)).toEqual(entries.map((e) => e.clusterUid));
    expect(body[body.length - 1]).toMatchObject({ uid: uidOf(1), name: 'c-1', ownerName: 'acme', nodeCount: 3 });
    // One the inventory no longer has is still listed, from the reports alone.
    expect(body[0]).toMatchObject({ uid: uidOf(CLUSTERS), name: '', ownerName: '' });
    expect(calls.getClusters).toBe(3);
  });

  it("lists every one of the user's active clusters with the number of active contracts binding each", async () => {
    const { body } = (await row('/dashboard/users/:uid/clusters/active').handle(
      { params: { uid: USER }, query: { limit: new Date(0) }, body: undefined },
      ctx as never,
    )) as { body: { clusterID: string; username: string; noOfAssociatedContracts: number }[] };
    expect(body.map((c) => c.clusterID)).toEqual(entries.map((e) => e.clusterUid));
    expect(body.every((c) => c.username === 'alice')).toBe(true);
    expect(body.map((c) => c.noOfAssociatedContracts)).toEqual(entries.map((e) => contracts(e.clusterUid)));
    expect(body.filter((c) => c.noOfAssociatedContracts > 0).length).toBeGreaterThan(500);
    expect(calls.countClusterContracts).toBe(3);
  });
});
