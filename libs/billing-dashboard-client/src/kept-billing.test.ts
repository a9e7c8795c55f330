import { BILLING_CHANGED } from '@platform/bus';
import { licensedV1, usageReportV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptBilling } from './clients';

// billing-dashboard's answers as a gateway keeps them: asked again, answered from memory; reports applied or a write
// answered by another replica (its notice still on the way) are seen by the very next request; the live resource
// history is always asked. A usage view, a stream of pieces of its JSON text, is kept whole the same way.

function dashboard() {
  const users = [licensedV1.LicensedEntry.fromPartial({ userId: 7 })];
  const view = { rows: ['{"clusterUID":"a"}'] };
  const asked: string[] = [];
  const service = <T extends object>(methods: T) => methods;
  return {
    users,
    view,
    asked,
    billing: service({}),
    outages: service({}),
    usageReport: service({
      // As the generated client's: the pieces of the view's JSON text, asked for as they are read.
      getUsageView: (req: usageReportV1.UsageViewRequest) =>
        (async function* () {
          asked.push(`view ${req.view}`);
          const rows = [...view.rows];
          yield usageReportV1.UsageViewChunk.fromPartial({ json: Buffer.from('{"rows":[') });
          for (const [i, row] of rows.entries())
            yield usageReportV1.UsageViewChunk.fromPartial({ json: Buffer.from(`${i ? ',' : ''}${row}`) });
          yield usageReportV1.UsageViewChunk.fromPartial({ json: Buffer.from(']}') });
        })(),
    }),
    licensed: service({
      listLicensedUsers: async (_q: licensedV1.LicensedQuery) => (
        asked.push('users'),
        licensedV1.LicensedEntries.fromPartial({ entries: [...users], reported: true })
      ),
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

  it('answers a usage view asked again from memory, and the very next request after reports are applied asks again', async () => {
    const app = dashboard();
    const { clients, readModel } = keptBilling(app, { reader: 'test', ttlMs: 60_000 });
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    const request = usageReportV1.UsageViewRequest.fromPartial({
      year: 2026,
      month: 10,
      product: 'productdb',
      view: 'clusters-usage-view',
    });
    const text = async () => {
      const pieces: Uint8Array[] = [];
      for await (const chunk of clients.usageReport.getUsageView(request)) pieces.push(chunk.json);
      return JSON.parse(Buffer.concat(pieces).toString('utf8')) as { rows: unknown[] };
    };
    expect((await text()).rows).toHaveLength(1);
    expect((await text()).rows).toHaveLength(1);
    expect(app.asked).toEqual(['view clusters-usage-view']);

    app.view.rows.push('{"clusterUID":"b"}');
    // billing-dashboard applied a batch of reports: its notice is still on its way when the next request comes.
    await bus.notify(BILLING_CHANGED, {});
    expect((await text()).rows).toHaveLength(2);
    expect((await text()).rows).toHaveLength(2);
    expect(app.asked).toEqual(['view clusters-usage-view', 'view clusters-usage-view']);
    await stop();
  });
});
