import { CONTRACTS_CHANGED } from '@platform/bus';
import { contractsV1, licensingV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptContracts } from './clients';

// contracts-licensing's read model, as its readers keep it: licenses by serial (a serial of no issued license too) and
// cluster contract counts, asked only for what is not kept, all dropped at once on its notice of any write (even one on
// its way), and a count kept no longer than until the first counted contract ends.

function backend() {
  const issued = new Map<string, licensingV1.IssuedLicense>();
  const counts = new Map<string, { count: number; endsUnix: number }>();
  const asked: string[] = [];
  return {
    issued,
    counts,
    asked,
    licenses: {
      getIssuedLicenses: async (q: licensingV1.GetIssuedLicensesRequest) => {
        asked.push(`licenses ${q.serials.join(',')}`);
        return licensingV1.IssuedLicenseList.fromPartial({ licenses: q.serials.flatMap((s) => issued.get(s) ?? []) });
      },
    },
    contracts: {
      countClusterContracts: async (q: contractsV1.CountClusterContractsRequest) => {
        asked.push(`counts ${q.clusters.join(',')}`);
        const of = (uid: string) => counts.get(uid) ?? { count: 0, endsUnix: 0 };
        return contractsV1.ClusterContractCounts.fromPartial({
          counts: Object.fromEntries(q.clusters.map((uid) => [uid, of(uid).count])),
          endsUnix: Object.fromEntries(q.clusters.filter((uid) => of(uid).endsUnix).map((uid) => [uid, of(uid).endsUnix])),
        });
      },
    },
  };
}

async function setUp() {
  const app = backend();
  const { clients, readModel } = keptContracts(app, { reader: 'test', ttlMs: 60_000 });
  const bus = new LaterBus();
  const stop = await readModel.follow(bus);
  return { app, clients, bus, stop };
}

const license = (serial: string) => licensingV1.IssuedLicense.fromPartial({ serial, contractId: 3 });

describe("contracts-licensing's read model", () => {
  it('keeps issued licenses and serials of none, asks only for the others, and drops all on its notice', async () => {
    const { app, clients, bus, stop } = await setUp();
    app.issued.set('a1', license('a1'));
    expect((await clients.licenses.getIssuedLicenses({ serials: ['a1', 'zz'] })).licenses.map((l) => l.serial)).toEqual(['a1']);
    expect((await clients.licenses.getIssuedLicenses({ serials: ['zz', 'a1', 'b2'] })).licenses.map((l) => l.serial)).toEqual(['a1']);
    expect(app.asked).toEqual(['licenses a1,zz', 'licenses b2']);
    // A license issued for zz by another replica, its notice still on the way.
    app.issued.set('zz', license('zz'));
    await bus.notify(CONTRACTS_CHANGED, {});
    expect((await clients.licenses.getIssuedLicenses({ serials: ['zz'] })).licenses.map((l) => l.serial)).toEqual(['zz']);
    await stop();
  });

  it('keeps a count until a write is announced, and no longer than its first contract lasts', async () => {
    const { app, clients, bus, stop } = await setUp();
    app.counts.set('c1', { count: 2, endsUnix: Math.floor(Date.now() / 1000) + 3600 });
    app.counts.set('c2', { count: 1, endsUnix: Math.floor(Date.now() / 1000) - 1 });
    const ask = () => clients.contracts.countClusterContracts({ clusters: ['c1', 'c2', 'c3'] });
    expect((await ask()).counts).toEqual({ c1: 2, c2: 1, c3: 0 });
    // c2's first contract has ended already: its count is asked again; c1 and c3 are kept.
    expect((await ask()).counts).toEqual({ c1: 2, c2: 1, c3: 0 });
    expect(app.asked).toEqual(['counts c1,c2,c3', 'counts c2']);
    app.counts.set('c3', { count: 1, endsUnix: Math.floor(Date.now() / 1000) + 3600 });
    await bus.notify(CONTRACTS_CHANGED, {});
    expect((await ask()).counts).toEqual({ c1: 2, c2: 1, c3: 1 });
    await stop();
  });
});
