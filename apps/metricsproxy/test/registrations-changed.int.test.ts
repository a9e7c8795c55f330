import { METRICSPROXY_CHANGED, type MetricsproxyChanged } from '@platform/bus';
import { metricsproxyV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { metricsproxyApp } from '../src/app';

// Every write of MetricsproxyService announces itself (metricsproxy.changed) before its caller hears back, answered or
// failed, naming the owner and cluster of its context, or all of them when it names none; its reads send nothing.

const CLUSTER = '0B7D4C1E-2F3A-4B5C-8D6E-7F8091A2B3C4';
const backend = metricsproxyV1.BackendConfig.fromPartial({ url: 'http://prom:9090' });

describe('metricsproxy announces its writes', () => {
  let app: AppUnderTest;
  let client: PromiseClient<typeof metricsproxyV1.MetricsproxyServiceService>;
  let unlisten: (() => Promise<void>) | undefined;
  const heard: MetricsproxyChanged[] = [];
  /** What was heard once every notice sent so far has been handed over (the readers' fence). */
  const heardSoFar = async () => {
    expect(await app.running.ctx.bus!.caughtUp()).toBe(true);
    return heard;
  };

  beforeAll(async () => {
    // Neither flavor configured: every register and unregister fails (503), and is announced all the same.
    app = await startAppForTest(metricsproxyApp);
    client = createClient(metricsproxyV1.MetricsproxyServiceService, app.address, { name: 'metricsproxy' });
    unlisten = await app.running.ctx.bus!.listen(METRICSPROXY_CHANGED, (_s, n) => void heard.push(n as MetricsproxyChanged));
  });
  afterAll(async () => {
    await unlisten?.();
    client?.close();
    await app?.stop();
  });

  it("names the owner and cluster of a write's context, failed ones too; reads send nothing", async () => {
    const context = metricsproxyV1.BackendContext.fromPartial({ ownerId: 7, ownerName: 'acme', clusterUid: CLUSTER, projectId: 'team-a' });
    const named = { registrations: [{ ownerId: 7, clusterUid: CLUSTER.toLowerCase() }] };
    await expect(client.registerFlavorA({ context, backend })).rejects.toMatchObject({ kind: 'unavailable' });
    expect(await heardSoFar()).toEqual([named]);
    await expect(client.unregisterFlavorB(context)).rejects.toMatchObject({ kind: 'unavailable' });
    expect(await heardSoFar()).toEqual([named, named]);
    expect(await client.lookupBackend({ ownerId: 7, clusterUid: CLUSTER, projectId: 'team-a' })).toEqual({ found: false, clientOrgId: '' });
    await client.getVersion({});
    expect(await heardSoFar()).toHaveLength(2);
  });

  it('announces all registrations for a write whose request names no owner and cluster', async () => {
    await expect(client.registerFlavorB({ backend })).rejects.toMatchObject({ kind: 'input' });
    expect((await heardSoFar()).at(-1)).toEqual({ registrations: [], all: true });
  });
});
