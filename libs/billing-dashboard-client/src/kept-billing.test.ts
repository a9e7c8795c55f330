import { BILLING_CHANGED } from '@platform/bus';
import { licensedV1 } from '@platform/proto';
import { LaterBus } from '@platform/testing';
import { keptBilling } from './clients';

// billing-dashboard's answers as a gateway keeps them: asked again, answered from memory; reports applied or a write
// answered by another replica (its notice still on the way) are seen by the very next request; the live resource
// history is always asked.

function dashboard() {
  const users = [licensedV1.LicensedEntry.fromPartial({ userId: 7 })];
  const asked: string[] = [];
  const service = <T extends object>(methods: T) => methods;
  return {
    users,
    asked,
    billing: service({}),
    outages: service({}),
    usageReport: service({}),
    licensed: service({
      listLicensedUsers: async (_q: licensedV1.LicensedQuery) => (asked.push('users'), licensedV1.LicensedEntries.fromPartial({ entries: [...users], reported: true })),
    }),
    events: service({ getResourceHistory: async (_q: unknown) => (asked.push('history'), { items: [] }) }),
  };
}

describe("billing-dashboard's kept answers", () => {
  it('answers a listing asked again from memory, and asks again right after reports are applied anywhere', async () => {
    const app = dashboard();
    const { clients, readModel } = keptBilling(app, { reader: 'test', ttlMs: 60_000 });
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    const query = licensedV1.LicensedQuery.fromPartial({ sinceUnix: 100 });
    expect((await clients.licensed.listLicensedUsers(query)).entries).toHaveLength(1);
    expect((await clients.licensed.listLicensedUsers(query)).entries).toHaveLength(1);
    expect(app.asked).toEqual(['users']);

    app.users.push(licensedV1.LicensedEntry.fromPartial({ userId: 8 }));
    await bus.notify(BILLING_CHANGED, {});
    expect((await clients.licensed.listLicensedUsers(query)).entries).toHaveLength(2);
    // Another window is another answer.
    await clients.licensed.listLicensedUsers({ ...query, sinceUnix: 200 });
    expect(app.asked).toEqual(['users', 'users', 'users']);

    await clients.events.getResourceHistory({} as never);
    await clients.events.getResourceHistory({} as never);
    expect(app.asked.filter((a) => a === 'history')).toHaveLength(2);
    await stop();
  });
});
