import { openDatabase, type Database } from '@platform/db';
import { InputError } from '@platform/errors';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { LicensedUsage } from '../src/licensed/licensed';

const A = '0b7d4c1e-0000-4000-8000-00000000000a';
const B = '0b7d4c1e-0000-4000-8000-00000000000b';
const at = (day: number) => new Date(Date.UTC(2026, 5, day));
const unix = (day: number) => at(day).getTime() / 1000;

describe('licensed users, clusters, licenses and products', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let licensed: LicensedUsage;

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    licensed = new LicensedUsage(db);
    const row = (user: number, cluster: string, license: string, product: string, first: number, last: number) => ({
      user_id: user,
      cluster_uid: cluster,
      license_id: license,
      product,
      first_received_at: at(first),
      last_received_at: at(last),
    });
    await db
      .table('licensed_products')
      .insert([
        row(7, A, 'lic-1', 'productdb', 1, 20),
        row(7, A, 'lic-1', 'productbackup', 3, 10),
        row(7, B, 'lic-2', 'productdb', 5, 6),
        row(8, A, 'lic-3', 'productvault', 2, 25),
        row(8, B, 'lic-3', 'productvault', 3, 4),
      ]);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const q = (over: Partial<Parameters<LicensedUsage['list']>[1]> = {}) => ({
    userId: 0,
    clusterUid: '',
    licenseId: '',
    product: '',
    sinceUnix: 0,
    ...over,
  });

  it('lists users latest first with their first and last received times, and only the active ones in a window', async () => {
    expect((await licensed.list('users', q())).map((e) => [e.userId, e.firstReceivedUnix, e.lastReceivedUnix])).toEqual([
      [8, unix(2), unix(25)],
      [7, unix(1), unix(20)],
    ]);
    expect((await licensed.list('users', q({ sinceUnix: unix(21) }))).map((e) => e.userId)).toEqual([8]);
  });

  it('lists a user’s clusters, a cluster’s licenses with their products, and a license’s products', async () => {
    expect((await licensed.list('clusters', q({ userId: 7 }))).map((e) => [e.clusterUid, e.firstReceivedUnix, e.lastReceivedUnix])).toEqual(
      [
        [A, unix(1), unix(20)],
        [B, unix(5), unix(6)],
      ],
    );
    expect((await licensed.list('licenses', q({ userId: 7, clusterUid: A }))).map((e) => [e.licenseId, e.products])).toEqual([
      ['lic-1', ['productbackup', 'productdb']],
    ]);
    // A license's clusters are every cluster the user reported it on, not only the one asked about, in any window.
    expect(
      (await licensed.list('licenses', q({ userId: 8, clusterUid: A, sinceUnix: unix(21) }))).map((e) => [e.licenseId, e.clusterUids]),
    ).toEqual([['lic-3', [A, B]]]);
    const products = await licensed.list('products', q({ userId: 7, clusterUid: A, licenseId: 'lic-1' }));
    expect(products.map((e) => [e.product, e.lastReceivedUnix])).toEqual([
      ['productdb', unix(20)],
      ['productbackup', unix(10)],
    ]);
    expect((await licensed.list('products', q({ userId: 7, clusterUid: A, licenseId: 'lic-1', product: 'productbackup' }))).length).toBe(1);
    expect(await licensed.list('clusters', q({ userId: 99 }))).toEqual([]);
  });

  it('answers with a listing whether its scope was ever reported, whatever the window and product', async () => {
    const reported = async (listing: Parameters<LicensedUsage['answer']>[0], over: Parameters<typeof q>[0]) => {
      const a = await licensed.answer(listing, q(over));
      return [a.entries.length, a.reported];
    };
    // Reported, and something in the window.
    expect(await reported('licenses', { userId: 7, clusterUid: A })).toEqual([1, true]);
    // Reported, nothing in the window (lic-1 was last received on day 20) or of that product: an empty list, not "never".
    expect(await reported('licenses', { userId: 7, clusterUid: A, sinceUnix: unix(21) })).toEqual([0, true]);
    expect(await reported('products', { userId: 7, clusterUid: A, licenseId: 'lic-1', sinceUnix: unix(21) })).toEqual([0, true]);
    expect(await reported('products', { userId: 7, clusterUid: A, licenseId: 'lic-1', product: 'productvault' })).toEqual([0, true]);
    // Never reported: another user's cluster, another cluster's license, a license never seen.
    expect(await reported('licenses', { userId: 7, clusterUid: '0b7d4c1e-0000-4000-8000-00000000000c', sinceUnix: unix(1) })).toEqual([
      0,
      false,
    ]);
    expect(await reported('products', { userId: 7, clusterUid: B, licenseId: 'lic-1', sinceUnix: unix(1) })).toEqual([0, false]);
    expect(await reported('products', { userId: 8, clusterUid: A, licenseId: 'lic-1' })).toEqual([0, false]);
  });

  it('lists every user’s licenses on a cluster, and refuses a listing without the keys it needs', async () => {
    expect((await licensed.list('clusterLicenses', q({ clusterUid: A }))).map((e) => [e.userId, e.licenseId])).toEqual([
      [8, 'lic-3'],
      [7, 'lic-1'],
    ]);
    await expect(licensed.list('licenses', q({ userId: 7 }))).rejects.toBeInstanceOf(InputError);
    await expect(licensed.list('clusterLicenses', q({ clusterUid: 'not-a-uuid' }))).rejects.toBeInstanceOf(InputError);
  });
});
