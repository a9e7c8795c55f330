import { bootTestPlatform, type TestPlatform } from './harness';
import { marketplaceKit } from './marketplace';

/**
 * Marketplace subscriptions as the apps make them together (docs/marketplaces.md), on one marketplace deployment
 * whose listener serves every provider: a notification reaching the listener through the gateway from the
 * provider's address, the subscriber's organization made in orgs-teams and its contract in contracts-licensing,
 * the archive behind the {link}, the claim held until the deployment runs and then moving the organization to its
 * buyer, and the contracts revoked by the marketplace's DELETE and by a site admin's revocation. Each row's statuses
 * and bodies: apps/gateway/test/marketplaces.test.ts; the listener's own rules:
 * apps/marketplace-listener/test/notifications.int.test.ts and metering.int.test.ts.
 */
describe('marketplace subscriptions across the apps', () => {
  let t: TestPlatform;
  const kit = marketplaceKit(() => t);
  const SECRET = 'a-marketplace-api-secret-for-e2e';
  // The gateway believes the test's X-Forwarded-For (TRUST_PROXY), so the test can speak from any address.
  const providerA = (body: unknown, address: string) =>
    kit.post('/marketplaces/providera/notification/resource', body, { 'x-forwarded-for': address });
  const providerB = (body: unknown) => kit.post(`/marketplaces/providerb/notification/resource?secret=${SECRET}`, body);
  const SUB = '0b5e7d1c-3a2f-4e6d-8c9b-1a2b3c4d5e6f';
  const event = (eventType: string, provisioningState: string, eventTime: string) => ({
    eventType,
    applicationId: `/subscriptions/${SUB}/resourceGroups/mrg-platform/providers/Microsoft.Solutions/applications/platform`,
    eventTime,
    provisioningState,
    billingDetails: { resourceUsageId: 'b7c1d2e3-usage' },
    plan: { publisher: 'us', product: 'productbackup', name: 'business', version: '2.0' },
  });

  beforeAll(async () => {
    t = await bootTestPlatform(
      {
        DEPLOYMENT_TYPE: 'ProviderAMarketplace',
        BILLING_ENABLED: 'true',
        TRUST_PROXY: 'loopback',
        PROVIDERA_ALLOWED_CIDRS: '+198.51.100.0/24',
        MARKETPLACE_API_SECRET: SECRET,
        MARKETPLACE_CLAIM_BACKOFF_SECONDS: '600',
      },
      { apps: ['authz', 'orgs-teams', 'contracts-licensing', 'marketplace-listener'] },
    );
    await t.signUp('buyer');
    await t.signUp('orgowner');
    expect((await t.api('orgowner', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
  }, 120_000);
  afterAll(() => t?.stop());

  it('binds through the gateway from the provider’s address only: its organization, contract and archive; a site admin’s revocation revokes the contract', async () => {
    const id = await kit.installer('ProviderA', { product: 'productdb' });
    const notification = {
      eventType: 'subscribe-success',
      eventTime: '2026-11-23T07:00:00Z',
      bindingInfo: kit.binding('ProviderA', id, { providerAAccountID: '210987654321', options: { replicas: 3 } }),
    };
    const before = await kit.footprint();
    for (const address of ['203.0.113.7', '127.0.0.1']) {
      expect(await providerA(notification, address)).toMatchObject({
        status: 403,
        body: { message: 'the notification does not come from an address of ProviderA' },
      });
    }
    expect(await kit.footprint()).toEqual(before);

    const bound = await providerA(notification, '198.51.100.20');
    expect(bound.status).toBe(200);
    expect(bound.body.link.startsWith(`${kit.root()}/marketplaces/installers/${id}/archive?expires=`)).toBe(true);
    const archive = await kit.download(bound.body.link);
    expect([archive.status, archive.type]).toEqual([200, 'application/gzip']);
    expect(archive.tar).toContain('accountID: "210987654321"');
    expect(archive.tar).toContain('replicas: 3');
    expect(archive.tar).not.toContain('buyer-Secret-pw-1');

    const sub = await kit.subscription('ProviderA', id);
    expect(sub).toMatchObject({ state: 'Bounded', bounded_installer_id: id, requester_id: t.ids.root });
    expect((await kit.contractsOf(sub.subscriber_id)).map((c) => [c.id, c.product, c.revoked, c.name])).toEqual([
      [sub.contract_ids[0], 'productdb', false, `ProviderA subscription ${id}`],
    ]);
    expect(await kit.membersOf(sub.subscriber_id, t.ids.root)).toEqual(['root']);
    // A redelivery answers alike and makes no second organization or contract.
    const again = await providerA(notification, '198.51.100.20');
    expect([again.status, again.body.link.split('?')[0]]).toEqual([200, bound.body.link.split('?')[0]]);
    expect(await kit.contractsOf(sub.subscriber_id)).toHaveLength(1);

    const revoked = await t.api('root', 'DELETE', `/dashboard/marketplaces/ProviderA/${id}?org=acme`);
    expect(revoked).toMatchObject({ status: 200, body: { state: 'Revoked', isRevocable: false } });
    expect((await kit.contractsOf(sub.subscriber_id)).map((c) => c.revoked)).toEqual([true]);
  });

  it('holds the claim until the deployment runs, then gives the organization to its buyer; DELETE revokes the contract', async () => {
    expect((await providerB(event('PUT', 'Accepted', '2026-11-23T08:00:00Z'))).status).toBe(200);
    const id = await kit.installer('ProviderB', {});
    const bound = await providerB({ ...event('BIND', '', '2026-11-23T08:01:00Z'), bindingInfo: kit.binding('ProviderB', id) });
    expect(bound.status).toBe(200);
    const sub = await kit.subscription('ProviderB', SUB);
    expect(sub).toMatchObject({ state: 'Bounded', bounded_installer_id: id });
    expect(await kit.contractsOf(sub.subscriber_id)).toEqual([
      expect.objectContaining({ product: 'productbackup', name: `ProviderB subscription ${SUB} (business)`, revoked: false }),
    ]);

    const early = await kit.claimable(sub.claim_id);
    expect(early.status).toBe(429);
    expect(Number(early.retryAfter)).toBeGreaterThan(500);
    expect((await providerB(event('PUT', 'Succeeded', '2026-11-23T08:02:00Z'))).status).toBe(200);
    expect(await kit.claimable(sub.claim_id)).toMatchObject({ status: 200, body: { isClaimable: true, claimID: sub.claim_id } });
    await kit.claimOrg(sub.claim_id, t.ids.buyer);
    expect(await kit.claimable(sub.claim_id)).toMatchObject({
      status: 409,
      body: { message: expect.stringMatching(/already been claimed/) },
    });
    expect(await kit.membersOf(sub.subscriber_id, t.ids.root)).toEqual(['buyer']);

    expect((await providerB(event('DELETE', 'Deleting', '2026-11-23T08:03:00Z'))).status).toBe(200);
    expect(await kit.subscription('ProviderB', SUB)).toMatchObject({ state: 'Deleting' });
    expect((await kit.contractsOf(sub.subscriber_id)).map((c) => c.revoked)).toEqual([true]);
  });
});
