import { contractsV1, licensingV1 } from '@platform/proto';
import { startFakeApp, type FakeApp } from '@platform/service-testing';
import { licensingRecordsAt } from '../src/ingestion/attribution';

// What attribution reads of contracts-licensing, over its gRPC (docs/billing-ingestion.md, "Attribution"): the
// licenses the platform issued among a batch's ids, and the contracts of the cluster's owner that bind the cluster,
// whatever their state. Here against a stand-in contracts-licensing that records what it is asked; what it answers
// for real: apps/contracts-licensing/test/licenses.int.test.ts ("reads issued licenses by ID") and
// contracts.int.test.ts (`boundTo`); what attribution makes of the records: ingestion-attribution.int.test.ts.

const SERVICES = { licensing: licensingV1.LicensingServiceService, contracts: contractsV1.ContractsServiceService };
const HUB = '0b7d4c1e-0000-4000-8000-0000000000aa';

describe("attribution's records from contracts-licensing", () => {
  let licensing: FakeApp<typeof SERVICES>;
  let records: ReturnType<typeof licensingRecordsAt>;

  beforeAll(async () => {
    licensing = await startFakeApp('contracts-licensing', SERVICES, {
      licensing: {
        // Only the ids of licenses it issued come back, each with its contract, holder and cluster.
        getIssuedLicenses: async ({ serials }) => ({
          licenses: serials
            .filter((s) => s === '1001')
            .map((serial) =>
              licensingV1.IssuedLicense.fromPartial({
                serial,
                contractId: 41,
                ownerId: 2,
                clusterUid: HUB,
                planName: 'productdb-enterprise',
              }),
            ),
        }),
      },
      contracts: {
        listContracts: async ({ ownerId }) => ({
          contracts:
            ownerId === 2
              ? [
                  contractsV1.Contract.fromPartial({ id: 41, ownerId: 2, product: 'productdb' }),
                  contractsV1.Contract.fromPartial({ id: 43, ownerId: 2, product: 'productbackup' }),
                ]
              : [],
        }),
      },
    });
    records = licensingRecordsAt(licensing.address);
  });
  afterAll(async () => {
    records?.close();
    await licensing?.close();
  });

  it('asks for the issued licenses among the ids in one call, and answers each with its contract, holder and cluster', async () => {
    expect(await records.records.issuedLicenses(['1001', 'lic-offline', '2001'])).toEqual([
      { serial: '1001', contractId: 41, ownerId: 2, clusterUid: HUB },
    ]);
    expect(licensing.callsTo('licensing', 'getIssuedLicenses')).toEqual([{ serials: ['1001', 'lic-offline', '2001'] }]);
  });

  it("asks for the owner's contracts binding the cluster, ended and revoked ones too, and answers their ids and products", async () => {
    expect(await records.records.contractsBinding(2, HUB)).toEqual([
      { id: 41, product: 'productdb' },
      { id: 43, product: 'productbackup' },
    ]);
    expect(await records.records.contractsBinding(3, HUB)).toEqual([]);
    expect(licensing.callsTo('contracts', 'listContracts')).toEqual([
      { ownerId: 2, activeOnly: false, offlineOnly: false, boundTo: HUB, notBoundTo: '' },
      { ownerId: 3, activeOnly: false, offlineOnly: false, boundTo: HUB, notBoundTo: '' },
    ]);
  });
});
