import { NotFoundError } from '@platform/errors';
import { accountMayReportFor, BusAccountDirectory, busAccountsOf, type ClusterBusAccount, type ClusterOwnership } from './accounts';

const HUB = '0b7d4c1e-0000-4000-8000-000000000001';
const SPOKE = '0b7d4c1e-0000-4000-8000-000000000002';
const OTHER_HUB = '0b7d4c1e-0000-4000-8000-000000000003';
const account: ClusterBusAccount = { busPubKey: 'UKEY', revoked: false, id: 9, ownerId: 42, clusterId: HUB };
const cluster = (uid: string, over: Partial<ClusterOwnership> = {}): ClusterOwnership => ({
  uid,
  ownerType: 'organization',
  ownerId: 42,
  hubUid: '',
  ...over,
});

describe('accountMayReportFor: who may report about which cluster', () => {
  it('lets an account report about the hub it was issued for and that hub’s managed clusters', () => {
    expect(accountMayReportFor(account, cluster(HUB))).toBe(true);
    expect(accountMayReportFor(account, cluster(SPOKE, { hubUid: HUB }))).toBe(true);
  });

  it('refuses another hub of the same organization, its spokes, another owner’s cluster, a user-owned one and an unknown one', () => {
    expect(accountMayReportFor(account, cluster(OTHER_HUB))).toBe(false);
    expect(accountMayReportFor(account, cluster(SPOKE, { hubUid: OTHER_HUB }))).toBe(false);
    expect(accountMayReportFor(account, cluster(HUB, { ownerId: 43 }))).toBe(false);
    expect(accountMayReportFor(account, cluster(HUB, { ownerType: 'user' }))).toBe(false);
    expect(accountMayReportFor(account, undefined)).toBe(false);
  });

  it('refuses everything to an account without an owner or a cluster', () => {
    expect(accountMayReportFor({ ...account, ownerId: 0 }, cluster(HUB, { ownerId: 0 }))).toBe(false);
    expect(accountMayReportFor({ ...account, clusterId: '' }, cluster(HUB))).toBe(false);
  });
});

describe('BusAccountDirectory', () => {
  it('asks each source once per key within a batch, and again in the next batch (a revocation shows there)', async () => {
    let accountCalls = 0;
    let clusterCalls = 0;
    let revoked = false;
    const directory = new BusAccountDirectory(
      async () => (accountCalls++, { ...account, revoked }),
      async (uid) => (clusterCalls++, cluster(uid, uid === SPOKE ? { hubUid: HUB } : {})),
    );
    const batch = directory.forBatch();
    for (let i = 0; i < 5; i++) {
      const found = await batch.accountOf('UKEY');
      expect(found?.revoked).toBe(false);
      expect(await batch.mayReportFor(found!, SPOKE)).toBe(true);
    }
    expect([accountCalls, clusterCalls]).toEqual([1, 1]);
    revoked = true;
    expect((await directory.forBatch().accountOf('UKEY'))?.revoked).toBe(true);
    expect(accountCalls).toBe(2);
  });

  it('shares a failure within the batch without remembering it past the batch', async () => {
    let fail = true;
    const directory = new BusAccountDirectory(
      async () => {
        if (fail) throw new Error('orgs-teams unavailable');
        return account;
      },
      async (uid) => cluster(uid),
    );
    const batch = directory.forBatch();
    await expect(batch.accountOf('UKEY')).rejects.toThrow('orgs-teams unavailable');
    fail = false;
    await expect(batch.accountOf('UKEY')).rejects.toThrow('orgs-teams unavailable');
    await expect(directory.forBatch().accountOf('UKEY')).resolves.toMatchObject({ id: 9 });
  });
});

describe('busAccountsOf: accounts from orgs-teams', () => {
  it('maps the answer, lower-cases the cluster id, and treats NotFound as no account; other errors propagate', async () => {
    const found = busAccountsOf({
      getBusAccountByKey: async () => ({ account: { id: '9', busPubKey: 'UKEY', revoked: true, clusterId: HUB.toUpperCase() }, orgId: '42' }),
    });
    await expect(found('UKEY')).resolves.toEqual({ busPubKey: 'UKEY', revoked: true, id: 9, ownerId: 42, clusterId: HUB });
    const missing = busAccountsOf({
      getBusAccountByKey: async () => {
        throw new NotFoundError('no bus account');
      },
    });
    await expect(missing('UKEY')).resolves.toBeUndefined();
    const down = busAccountsOf({
      getBusAccountByKey: async () => {
        throw new Error('unavailable');
      },
    });
    await expect(down('UKEY')).rejects.toThrow('unavailable');
  });
});
