import { CLUSTERS_CHANGED, CONTRACTS_CHANGED } from '@platform/bus';
import { contractsV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptContractsLicensingReads } from './clients';

// The contract reads as a gateway keeps them: a contract asked again is answered from memory; a write through another
// replica (its notice still on the way) or a change of the inventory's clusters is seen by the very next request; a
// document is always asked.

function contractsApp() {
  const names = new Map<number, string>([[3, 'gold']]);
  const asked: string[] = [];
  const contract = (id: number) => contractsV1.Contract.fromPartial({ id, ownerId: 7, name: names.get(id) ?? '' });
  return {
    names,
    asked,
    getContract: async (q: contractsV1.ContractRef) => (asked.push(`contract ${q.id}`), contract(q.id)),
    listAudit: async (q: contractsV1.ContractRef) => (asked.push(`audit ${q.id}`), contractsV1.AuditEventList.fromPartial({})),
    getDocument: async (q: contractsV1.ContractRef) => (asked.push(`document ${q.id}`), contractsV1.ContractDocument.fromPartial({})),
  };
}

async function setUp() {
  const app = contractsApp();
  const { clients, readModel } = keptContractsLicensingReads(
    { contracts: app, licenses: {}, notifications: {} },
    { reader: 'test', ttlMs: 60_000 },
  );
  const client = clients.contracts;
  const bus = new LaterBus();
  const stop = await readModel.follow(bus);
  return { app, client, bus, stop };
}

describe('the contract reads a reader keeps', () => {
  it('answers a contract asked again from memory, and asks again right after a write or an inventory change', async () => {
    const { app, client, bus, stop } = await setUp();
    const get = { id: 3, ownerId: 7 } as contractsV1.ContractRef;
    expect((await client.getContract(get)).name).toBe('gold');
    expect((await client.getContract(get)).name).toBe('gold');
    expect(app.asked).toEqual(['contract 3']);

    app.names.set(3, 'platinum');
    await bus.notify(CONTRACTS_CHANGED, {});
    expect((await client.getContract(get)).name).toBe('platinum');

    await bus.notify(CLUSTERS_CHANGED, { uids: ['0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4'], owners: [] });
    await client.getContract(get);
    expect(app.asked).toEqual(['contract 3', 'contract 3', 'contract 3']);
    await stop();
  });

  it("keeps where a contract's document is stored, and asks again after a write anywhere", async () => {
    const { app, client, bus, stop } = await setUp();
    const get = { id: 3, ownerId: 7 } as contractsV1.ContractRef;
    for (let i = 0; i < 2; i++) {
      await client.getDocument(get);
      await client.listAudit(get);
    }
    expect(app.asked).toEqual(['document 3', 'audit 3']);
    // A new document uploaded through another replica: its notice still on the way, the next read asks.
    await bus.notify(CONTRACTS_CHANGED, {});
    await client.getDocument(get);
    expect(app.asked).toEqual(['document 3', 'audit 3', 'document 3']);
    await stop();
  });
});
