import { METRICSPROXY_CHANGED } from '@platform/bus';
import { metricsproxyV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptBackends, metricsproxyChangedBy } from './clients';

// metricsproxy's read model, as its readers keep it: one call for what was asked before, the very next request after a
// write asks again (even while the write's notice is on its way), another owner's or cluster's notice leaves it kept,
// a miss kept until the registration's notice.

const EAST = '0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4';
const WEST = '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5';
const context = (ownerId: number, clusterUid: string, clientOrgId = '') =>
  metricsproxyV1.BackendContext.fromPartial({ ownerId, ownerName: `owner-${ownerId}`, clusterUid, clientOrgId });

/** metricsproxy as its readers see it: the registrations it holds, what it was asked, and its writes with their notice. */
function registry(bus: LaterBus) {
  const clientOrgs = new Map<string, string>();
  const asked: string[] = [];
  const keyOf = (ownerId: number, clusterUid: string, projectId = '') => `${ownerId}|${clusterUid.toLowerCase()}|${projectId}`;
  // As the service's binding does: the write, then its notice (announcingWrites), awaited before the caller hears back.
  const write = async (request: unknown, change: () => void) => {
    change();
    await bus.notify(METRICSPROXY_CHANGED, metricsproxyChangedBy({ request }));
  };
  return {
    asked,
    lookupBackend: async (q: metricsproxyV1.LookupBackendRequest) => {
      asked.push(`lookup ${keyOf(q.ownerId, q.clusterUid, q.projectId)}`);
      const clientOrgId = clientOrgs.get(keyOf(q.ownerId, q.clusterUid, q.projectId));
      return metricsproxyV1.LookupBackendResponse.fromPartial({ found: clientOrgId !== undefined, clientOrgId: clientOrgId ?? '' });
    },
    register: (ctx: metricsproxyV1.BackendContext) =>
      write({ context: ctx, backend: { url: 'http://prom:9090' } }, () =>
        clientOrgs.set(keyOf(ctx.ownerId, ctx.clusterUid, ctx.projectId), ctx.clientOrgId),
      ),
    unregister: (ctx: metricsproxyV1.BackendContext) =>
      write(ctx, () => clientOrgs.delete(keyOf(ctx.ownerId, ctx.clusterUid, ctx.projectId))),
  };
}

async function setUp() {
  const bus = new LaterBus();
  const app = registry(bus);
  const { client, readModel } = keptBackends(app, { reader: 'test', ttlMs: 60_000 });
  const stop = await readModel.follow(bus);
  return { app, client, stop, bus };
}

const lookup = (ownerId: number, clusterUid: string, projectId = '') => ({ ownerId, clusterUid, projectId });

describe("metricsproxy's read model", () => {
  it('answers a registration asked again from what it kept, and asks again at once after a write naming it', async () => {
    const { app, client, stop } = await setUp();
    await app.register(context(7, EAST, 'client-7'));
    expect(await client.lookupBackend(lookup(7, EAST))).toEqual({ found: true, clientOrgId: 'client-7' });
    expect(await client.lookupBackend(lookup(7, EAST.toUpperCase()))).toEqual({ found: true, clientOrgId: 'client-7' });
    expect(app.asked).toEqual([`lookup 7|${EAST}|`]);
    // Registered again with another client organization; its notice is still on its way when the next request comes.
    await app.register(context(7, EAST, 'client-8'));
    expect((await client.lookupBackend(lookup(7, EAST))).clientOrgId).toBe('client-8');
    // Unregistered: the next request finds nothing.
    await app.unregister(context(7, EAST));
    expect((await client.lookupBackend(lookup(7, EAST))).found).toBe(false);
    expect(app.asked).toHaveLength(3);
    await stop();
  });

  it("leaves an entry kept on another owner's notice and on another cluster's", async () => {
    const { app, client, stop } = await setUp();
    await app.register(context(7, EAST, 'client-7'));
    await client.lookupBackend(lookup(7, EAST));
    await app.register(context(8, EAST, 'client-8'));
    await app.register(context(7, WEST, 'client-9'));
    expect((await client.lookupBackend(lookup(7, EAST))).clientOrgId).toBe('client-7');
    expect(app.asked).toEqual([`lookup 7|${EAST}|`]);
    await stop();
  });

  it("drops every project's answer of the cluster named, and everything on a write that names none", async () => {
    const { app, client, stop, bus } = await setUp();
    await app.register(context(7, EAST, 'client-7'));
    await app.register({ ...context(7, WEST, 'client-9'), projectId: 'team-a' });
    await client.lookupBackend(lookup(7, EAST));
    await client.lookupBackend(lookup(7, WEST, 'team-a'));
    // Another project of the same cluster registered: team-a's answer is asked again, the other cluster's stays kept.
    await app.register({ ...context(7, WEST, 'client-10'), projectId: 'team-b' });
    expect((await client.lookupBackend(lookup(7, WEST, 'team-a'))).clientOrgId).toBe('client-9');
    await client.lookupBackend(lookup(7, EAST));
    expect(app.asked).toEqual([`lookup 7|${EAST}|`, `lookup 7|${WEST}|team-a`, `lookup 7|${WEST}|team-a`]);
    await bus.notify(METRICSPROXY_CHANGED, metricsproxyChangedBy({ request: {} }));
    await client.lookupBackend(lookup(7, EAST));
    expect(app.asked.at(-1)).toBe(`lookup 7|${EAST}|`);
    expect(app.asked).toHaveLength(4);
    await stop();
  });

  it('keeps a lookup that found none until the registration that follows is announced, even one on its way', async () => {
    const { app, client, stop } = await setUp();
    expect((await client.lookupBackend(lookup(7, EAST))).found).toBe(false);
    expect((await client.lookupBackend(lookup(7, EAST))).found).toBe(false);
    expect(app.asked).toHaveLength(1);
    await app.register(context(7, EAST, 'client-7'));
    expect(await client.lookupBackend(lookup(7, EAST))).toEqual({ found: true, clientOrgId: 'client-7' });
    await stop();
  });

  it("names a write's owner and cluster from its request, and all when it names none", () => {
    expect(metricsproxyChangedBy({ request: { context: context(7, EAST.toUpperCase()), backend: {} } })).toEqual({
      registrations: [{ ownerId: 7, clusterUid: EAST }],
    });
    expect(metricsproxyChangedBy({ request: context(7, EAST) })).toEqual({ registrations: [{ ownerId: 7, clusterUid: EAST }] });
    expect(metricsproxyChangedBy({ request: { context: undefined, backend: {} } })).toEqual({ registrations: [], all: true });
    expect(metricsproxyChangedBy({ request: context(0, EAST) })).toEqual({ registrations: [], all: true });
    expect(metricsproxyChangedBy({ request: undefined })).toEqual({ registrations: [], all: true });
  });
});
