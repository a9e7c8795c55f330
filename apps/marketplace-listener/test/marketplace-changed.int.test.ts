import { MARKETPLACE_CHANGED } from '@platform/bus';
import { NatsBus } from '@platform/bus/nats';
import { marketplaceListenerV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { freePort, testNatsUrl } from '@platform/testing';
import { createMarketplaceListenerApp } from '../src/app';
import { fakeDirectory } from './fake-directory';

// What marketplace-listener's readers keep (@platform/marketplace-listener-client) is dropped by marketplace.changed:
// sent at start, after every write method (answered or failed), and after every notification its webhook processed
// that wrote (a binding, a redelivery or a refusal audited), before the marketplace hears back; its reads send nothing,
// nor does a notification refused before anything was read or stored.

const SECRET = 'a-marketplace-api-secret-of-ours';

/** The listener's installation, known before it starts: the reader listens in it from the first notice. */
const NAMESPACE = `marketplace-changed-${process.pid}`;

describe('marketplace-listener announces its writes', () => {
  let app: AppUnderTest;
  let reader: NatsBus;
  let grpc: PromiseClient<typeof marketplaceListenerV1.MarketplaceListenerServiceService>;
  let base: string;
  let heard = 0;
  /** How many notices were heard once every notice sent so far has been handed over (a reader's fence). */
  const heardSoFar = async () => {
    expect(await reader.caughtUp()).toBe(true);
    return heard;
  };

  beforeAll(async () => {
    // A reader on the bus before the listener starts, as a gateway is.
    reader = await NatsBus.create(await testNatsUrl(), 'marketplace-changed-test', { namespace: NAMESPACE });
    await reader.listen(MARKETPLACE_CHANGED, () => void heard++);
    const port = await freePort();
    app = await startAppForTest(createMarketplaceListenerApp({ directory: () => fakeDirectory() }), {
      MARKETPLACE_HTTP_PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}/`,
      MARKETPLACE_API_SECRET: SECRET,
      BUS_NAMESPACE: NAMESPACE,
    });
    base = `http://127.0.0.1:${port}/marketplace/api/v1`;
    grpc = createClient(marketplaceListenerV1.MarketplaceListenerServiceService, app.address, { name: 'marketplace-listener' });
  });
  afterAll(async () => {
    grpc?.close();
    await app?.stop();
    await reader?.close();
  });

  const providerC = async (body: unknown, secret = SECRET) => {
    const res = await fetch(`${base}/marketplaces/providerc/notification/resource?secret=${encodeURIComponent(secret)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return res.status;
  };
  const binding = (installerId: string) => ({
    marketplace: 'ProviderC',
    installerId,
    clusterId: 'a1b2c3d4-0000-4000-8000-000000000001',
    adminUsername: 'buyer-admin',
    domainWhiteList: ['buyer.example.com'],
    options: {},
  });

  it('announces its start, as its settings (the configuration warnings) may have changed', async () => {
    expect(await heardSoFar()).toBe(1);
  });

  it('announces every write method, failed ones too; its reads and the live pings send nothing', async () => {
    const before = await heardSoFar();
    await grpc.listSubscriptions({ marketplace: '' });
    await grpc.listInstallers({ marketplace: '', unboundOnly: false, limit: 0 });
    await grpc.getSettingWarnings({});
    await grpc.getVersion({});
    await expect(grpc.getSubscription({ marketplace: 'ProviderC', subscriptionId: 'none' })).rejects.toMatchObject({ kind: 'input' });
    await expect(grpc.checkReadiness({ marketplace: 'ProviderB', subscriptionId: '' })).rejects.toMatchObject({ kind: 'not-found' });
    expect(await heardSoFar()).toBe(before);

    await grpc.createInstaller({ marketplace: 'ProviderC', optionsJson: JSON.stringify({ product: 'productdb' }), actor: 'root' });
    expect(await heardSoFar()).toBe(before + 1);
    await expect(grpc.createInstaller({ marketplace: 'Nowhere', optionsJson: '{}', actor: 'root' })).rejects.toMatchObject({
      kind: 'input',
    });
    expect(await heardSoFar()).toBe(before + 2);
  });

  it('announces a notification that wrote before answering it, and one refused unheard not at all', async () => {
    const id = (
      await grpc.createInstaller({ marketplace: 'ProviderC', optionsJson: JSON.stringify({ product: 'productdb' }), actor: 'root' })
    ).id;
    const before = await heardSoFar();
    // Refused before anything was read or stored: nothing changed.
    expect(await providerC({ eventType: 'subscribe', bindingInfo: binding(id) }, 'x'.repeat(32))).toBe(403);
    expect(await heardSoFar()).toBe(before);

    // The binding: the notification's writes, and the subscriber the outbox effect recorded on it, each announced.
    expect(await providerC({ eventType: 'subscribe', eventTime: '2026-11-23T06:30:00Z', bindingInfo: binding(id) })).toBe(200);
    expect(await heardSoFar()).toBe(before + 2);
    const [sub] = (await grpc.listSubscriptions({ marketplace: 'ProviderC' })).subscriptions;
    expect(sub).toMatchObject({ subscriptionId: id, state: 'Bounded', subscriberId: expect.any(Number) });
    expect(sub.subscriberId).toBeGreaterThan(0);

    // A redelivery writes its audit entry; an invalid notification past authentication its refusal.
    expect(await providerC({ eventType: 'subscribe', eventTime: '2026-11-23T06:30:00Z', bindingInfo: binding(id) })).toBe(200);
    expect(await heardSoFar()).toBe(before + 3);
    expect(await providerC({ eventType: 'subscribe', bindingInfo: { ...binding(id), marketplace: 'ProviderA' } })).toBe(400);
    expect(await heardSoFar()).toBe(before + 4);
    expect((await grpc.listAuditReports({ marketplace: 'ProviderC', subscriptionId: id })).periods.flatMap((p) => p.events)).toHaveLength(
      3,
    );

    // The site admin's revocation, a write method.
    await grpc.revokeSubscription({ marketplace: 'ProviderC', subscriptionId: id, actor: 'root' });
    expect(await heardSoFar()).toBe(before + 5);
  });
});
