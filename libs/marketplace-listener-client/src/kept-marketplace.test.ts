import { BILLING_CHANGED, MARKETPLACE_CHANGED } from '@platform/bus';
import { InputError } from '@platform/errors';
import { marketplaceListenerV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptMarketplaceListener, MARKETPLACE_READS } from './clients';

// marketplace-listener's answers as a gateway keeps them: asked again, answered from memory; a write answered by
// another replica or a notification its webhook processed (its notice still on the way) is seen by the very next
// request; the metering ping and readiness, asked live of the provider, are always asked.

type Sub = marketplaceListenerV1.Subscription;

/** marketplace-listener as its readers see it: its rows, what it was asked, and its writes with their notice. */
function listenerApp(bus: LaterBus) {
  const subs = new Map<string, Sub>();
  const installers: marketplaceListenerV1.Installer[] = [];
  const audit: marketplaceListenerV1.AuditEvent[] = [];
  const warnings = [{ marketplace: 'ProviderA', warnings: [{ level: 'Error', msg: 'PROVIDERA_PRODUCT_CODE is not set' }] }];
  const asked: string[] = [];
  const sub = (subscriptionId: string, state: string) =>
    marketplaceListenerV1.Subscription.fromPartial({ marketplace: 'ProviderA', subscriptionId, state, isRevocable: state !== 'Revoked' });
  // As the service does after every write method, every processed notification and every effect that wrote: the
  // write, then its notice, awaited before the caller hears back (it reaches the readers a turn later).
  const write = async (change: () => void) => {
    change();
    await bus.notify(MARKETPLACE_CHANGED, {});
  };
  const existing = (ref: marketplaceListenerV1.SubscriptionRef) => {
    const found = subs.get(ref.subscriptionId);
    if (!found) throw new InputError(`subscription ${ref.subscriptionId} of ${ref.marketplace} does not exist`);
    return found;
  };
  const listener = {
    getVersion: async (_q: unknown) => (asked.push('version'), { version: '1', service: 'marketplace-listener' }),
    listSubscriptions: async (_q: marketplaceListenerV1.ListSubscriptionsRequest) => (
      asked.push('subscriptions'),
      { subscriptions: [...subs.values()].map((s) => ({ ...s })) }
    ),
    getSubscription: async (q: marketplaceListenerV1.SubscriptionRef) => (
      asked.push(`subscription ${q.subscriptionId}`),
      { ...existing(q) }
    ),
    listAuditReports: async (q: marketplaceListenerV1.SubscriptionRef) => (
      asked.push(`audit ${q.subscriptionId}`),
      existing(q),
      { periods: [{ period: '2026-11', events: structuredClone(audit) }] }
    ),
    listInstallers: async (_q: marketplaceListenerV1.ListInstallersRequest) => (
      asked.push('installers'),
      { installers: installers.map((i) => ({ ...i })) }
    ),
    getSettingWarnings: async (_q: unknown) => (asked.push('warnings'), { marketplaces: structuredClone(warnings) }),
    pingSubscription: async (q: marketplaceListenerV1.SubscriptionRef) => (
      asked.push(`ping ${q.subscriptionId}`),
      { marketplace: 'ProviderA', ready: true, message: '' }
    ),
    checkReadiness: async (q: marketplaceListenerV1.CheckReadinessRequest) => (
      asked.push('readiness'),
      { marketplace: q.marketplace, ready: true, message: '' }
    ),
  };
  return {
    asked,
    listener,
    /** A marketplace's binding notification, processed by the webhook route (over HTTP, not a method). */
    bind: (installerId: string) =>
      write(() => {
        subs.set(installerId, sub(installerId, 'Bounded'));
        installers.find((i) => i.id === installerId)!.boundSubscriptionId = installerId;
        audit.push(
          marketplaceListenerV1.AuditEvent.fromPartial({ subscriptionId: installerId, status: 'Succeeded', operationType: 'BIND' }),
        );
      }),
    /** The subscriber recorded by the outbox's relay, long after the notification. */
    provisioned: (id: string) => write(() => subs.set(id, { ...subs.get(id)!, subscriberId: 12, claimId: 'c1' })),
    /** RevokeSubscription through another replica. */
    revoke: (id: string) => write(() => subs.set(id, sub(id, 'Revoked'))),
    createInstaller: (id: string) =>
      write(() => installers.push(marketplaceListenerV1.Installer.fromPartial({ id, marketplace: 'ProviderA' }))),
    /** A restart with other settings. */
    restarted: (msg: string) => write(() => (warnings[0].warnings = [{ level: 'Warning', msg }])),
  };
}

async function setUp(available = () => true) {
  const bus = new LaterBus();
  const app = listenerApp(bus);
  const { clients, readModel } = keptMarketplaceListener({ listener: app.listener }, { reader: 'test', ttlMs: 60_000, available });
  const stop = await readModel.follow(bus);
  return { app, client: clients.listener, bus, stop };
}

const ref = (subscriptionId: string) => ({ marketplace: 'ProviderA', subscriptionId });
const all = { marketplace: '' };

describe("marketplace-listener's kept answers", () => {
  it('answers the subscriptions asked again from memory, and asks again right after a notification bound one', async () => {
    const { app, client, stop } = await setUp();
    await app.createInstaller('inst-1');
    expect((await client.listSubscriptions(all)).subscriptions).toEqual([]);
    expect((await client.listSubscriptions(all)).subscriptions).toEqual([]);
    expect(app.asked).toEqual(['subscriptions']);
    // The webhook's binding; its notice is still on its way when the next request comes.
    await app.bind('inst-1');
    expect((await client.listSubscriptions(all)).subscriptions.map((s) => [s.subscriptionId, s.state])).toEqual([['inst-1', 'Bounded']]);
    // The subscriber recorded later by the relay; a revocation through another replica.
    await app.provisioned('inst-1');
    expect((await client.listSubscriptions(all)).subscriptions[0].subscriberId).toBe(12);
    await app.revoke('inst-1');
    expect((await client.listSubscriptions(all)).subscriptions[0].state).toBe('Revoked');
    // One marketplace's list is another answer.
    await client.listSubscriptions({ marketplace: 'ProviderA' });
    expect(app.asked).toEqual(['subscriptions', 'subscriptions', 'subscriptions', 'subscriptions', 'subscriptions']);
    await stop();
  });

  it('keeps one subscription, its audit log and the installers until the next notice, each by its request', async () => {
    const { app, client, stop } = await setUp();
    await app.createInstaller('inst-1');
    await app.createInstaller('inst-2');
    await app.bind('inst-1');
    await app.bind('inst-2');
    for (let i = 0; i < 2; i++) {
      await client.getSubscription(ref('inst-1'));
      await client.getSubscription(ref('inst-2'));
      await client.listAuditReports(ref('inst-1'));
      await client.listInstallers({ marketplace: '', unboundOnly: false, limit: 0 });
    }
    expect(app.asked).toEqual(['subscription inst-1', 'subscription inst-2', 'audit inst-1', 'installers']);
    await app.createInstaller('inst-3');
    expect((await client.listInstallers({ marketplace: '', unboundOnly: false, limit: 0 })).installers).toHaveLength(3);
    await app.revoke('inst-2');
    expect((await client.getSubscription(ref('inst-2'))).state).toBe('Revoked');
    expect((await client.listAuditReports(ref('inst-1'))).periods[0].events).toHaveLength(2);
    expect(app.asked.slice(4)).toEqual(['installers', 'subscription inst-2', 'audit inst-1']);
    await stop();
  });

  it('keeps the configuration warnings until the listener announces its start', async () => {
    const { app, client, stop } = await setUp();
    expect((await client.getSettingWarnings({})).marketplaces[0].warnings[0].level).toBe('Error');
    await client.getSettingWarnings({});
    expect(app.asked).toEqual(['warnings']);
    await app.restarted('no static metering credentials');
    expect((await client.getSettingWarnings({})).marketplaces[0].warnings).toEqual([
      { level: 'Warning', msg: 'no static metering credentials' },
    ]);
    expect(app.asked).toEqual(['warnings', 'warnings']);
    await stop();
  });

  it("leaves what it kept on another service's notice, and keeps no refusal", async () => {
    const { app, bus, client, stop } = await setUp();
    await client.listSubscriptions(all);
    await bus.notify(BILLING_CHANGED, {});
    await client.listSubscriptions(all);
    expect(app.asked).toEqual(['subscriptions']);
    // An unknown subscription is 400 each time it is asked, and the binding that makes it is seen at once.
    await expect(client.getSubscription(ref('inst-9'))).rejects.toBeInstanceOf(InputError);
    await expect(client.getSubscription(ref('inst-9'))).rejects.toBeInstanceOf(InputError);
    await app.createInstaller('inst-9');
    await app.bind('inst-9');
    expect((await client.getSubscription(ref('inst-9'))).state).toBe('Bounded');
    expect(app.asked.filter((a) => a === 'subscription inst-9')).toHaveLength(3);
    await stop();
  });

  it('always asks the provider live: the metering ping and readiness, and the version', async () => {
    const { app, client, stop } = await setUp();
    for (let i = 0; i < 2; i++) {
      await client.pingSubscription(ref('inst-1'));
      await client.checkReadiness({ marketplace: 'ProviderA', subscriptionId: '' });
      await client.getVersion({});
    }
    expect(app.asked).toEqual(['ping inst-1', 'readiness', 'version', 'ping inst-1', 'readiness', 'version']);
    expect(Object.keys(MARKETPLACE_READS.listener)).not.toEqual(expect.arrayContaining(['pingSubscription']));
    expect(Object.keys(MARKETPLACE_READS.listener)).not.toEqual(expect.arrayContaining(['checkReadiness']));
    await stop();
  });

  it('serves nothing kept while the listener does not answer, and freezes what it keeps', async () => {
    let up = true;
    const { app, client, stop } = await setUp(() => up);
    await client.listSubscriptions(all);
    up = false;
    await client.listSubscriptions(all);
    up = true;
    const kept = await client.listSubscriptions(all);
    expect(app.asked).toEqual(['subscriptions', 'subscriptions']);
    expect(Object.isFrozen(kept.subscriptions)).toBe(true);
    await stop();
  });
});
