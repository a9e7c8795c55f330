import { bootTestPlatform, type TestPlatform } from './harness';
import { marketplaceKit } from './marketplace';

/**
 * The webhook listener on a second-provider marketplace deployment (docs/marketplaces.md): the secret,
 * PUT/DELETE provisioning states as subscription states, BIND with its {link}, the claim's backoff until the
 * deployment runs, contracts revoked on DELETE, redeliveries, races, and refusals that leave nothing behind.
 */
describe('marketplace listener on ProviderBMarketplace', () => {
  let t: TestPlatform;
  const kit = marketplaceKit(() => t);
  const SECRET = 'provider-b-secret-for-the-e2e';
  const notify = (body: unknown, secret: string | null = SECRET) =>
    kit.post(`/marketplaces/providerb/notification/resource${secret === null ? '' : `?secret=${encodeURIComponent(secret)}`}`, body);
  const appId = (sub: string) => `/subscriptions/${sub}/resourceGroups/mrg-platform/providers/Microsoft.Solutions/applications/platform`;
  const SUB = '0b5e7d1c-3a2f-4e6d-8c9b-1a2b3c4d5e6f';
  const plan = { publisher: 'us', product: 'productbackup', name: 'business', version: '2.0' };
  const event = (eventType: string, provisioningState: string, eventTime: string, sub = SUB) => ({
    eventType,
    applicationId: appId(sub),
    eventTime,
    provisioningState,
    billingDetails: { resourceUsageId: 'b7c1d2e3-usage' },
    plan,
  });

  beforeAll(async () => {
    t = await bootTestPlatform({
      DEPLOYMENT_TYPE: 'ProviderBMarketplace',
      MARKETPLACE_API_SECRET: SECRET,
      MARKETPLACE_CLAIM_BACKOFF_SECONDS: '600',
    });
    await t.signUp('buyer');
  }, 120_000);
  afterAll(() => t?.stop());

  it('refuses a wrong or missing secret with 403 and stores nothing, not even an audit entry', async () => {
    const before = await kit.footprint();
    for (const secret of [null, '', 'provider-b-secret-for-the-e2f', SECRET.slice(0, -1)]) {
      const res = await notify(event('PUT', 'Accepted', '2026-11-23T08:00:00Z'), secret);
      expect(res).toMatchObject({ status: 403, body: { message: 'the secret does not match' } });
    }
    expect(await kit.footprint()).toEqual(before);
    expect(await kit.auditOf('ProviderB', SUB)).toEqual([]);
  });

  it('refuses an unknown event type, an invalid subscription ID, an unknown state and invalid binding info with 400', async () => {
    const before = await kit.footprint();
    const cases: [unknown, RegExp][] = [
      [{ ...event('PUT', 'Accepted', '2026-11-23T08:00:00Z'), eventType: 'POST' }, /eventType: must be PUT, DELETE or BIND/],
      [
        {
          ...event('PUT', 'Accepted', '2026-11-23T08:00:00Z'),
          applicationId: `/subscriptions/not-a-uuid/resourceGroups/x/providers/a/b/c`,
        },
        /invalid subscription ID/,
      ],
      [event('PUT', 'Creating', '2026-11-23T08:00:00Z'), /provisioningState must be one of Accepted, Succeeded, Failed for PUT/],
      [event('DELETE', 'Accepted', '2026-11-23T08:00:00Z'), /provisioningState must be one of Deleting, Deleted, Failed for DELETE/],
      [
        { ...event('BIND', '', '2026-11-23T08:00:00Z'), bindingInfo: { marketplace: 'ProviderB', installerId: 'x' } },
        /bindingInfo.clusterId/,
      ],
      [
        { ...event('BIND', '', '2026-11-23T08:00:00Z'), bindingInfo: kit.binding('ProviderA', 'x') },
        /bindingInfo.marketplace must be ProviderB/,
      ],
      [
        { ...event('BIND', '', '2026-11-23T08:00:00Z'), bindingInfo: kit.binding('ProviderB', 'no-such-installer') },
        /installer no-such-installer does not exist/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await notify(body);
      expect([res.status, res.body?.message]).toEqual([400, expect.stringMatching(message)]);
    }
    expect(await kit.footprint()).toEqual(before);
    const unknown = await notify(event('DELETE', 'Deleting', '2026-11-23T08:00:00Z', '99999999-9999-4999-8999-999999999999'));
    expect(unknown).toMatchObject({ status: 403, body: { message: 'subscription 99999999-9999-4999-8999-999999999999 does not exist' } });
    expect(await kit.footprint()).toEqual(before);
  });

  it('walks a subscription through its states: Pending, Bounded, Running, Deleting, DeletionFailed, Deleted', async () => {
    const accepted = await notify(event('PUT', 'Accepted', '2026-11-23T08:00:00Z'));
    expect([accepted.status, accepted.body]).toEqual([200, undefined]);
    expect(await kit.subscription('ProviderB', SUB)).toMatchObject({
      state: 'Pending',
      bounded_installer_id: null,
      billing_details: {
        managedResourceGroupId: `/subscriptions/${SUB}/resourceGroups/mrg-platform`,
        resourceUsageId: 'b7c1d2e3-usage',
        plan,
      },
    });

    const id = await kit.installer('ProviderB', {});
    const bound = await notify({ ...event('BIND', '', '2026-11-23T08:01:00Z'), bindingInfo: kit.binding('ProviderB', id) });
    expect(bound.status).toBe(200);
    expect((await kit.download(bound.body.link)).tar).toContain('subscriptionId: 0b5e7d1c-3a2f-4e6d-8c9b-1a2b3c4d5e6f');
    const sub = await kit.subscription('ProviderB', SUB);
    expect(sub).toMatchObject({ state: 'Bounded', bounded_installer_id: id });
    const [contract] = await kit.contractsOf(sub.subscriber_id);
    expect(contract).toMatchObject({ product: 'productbackup', name: `ProviderB subscription ${SUB} (business)`, revoked: false });

    // Until the deployment runs, the claim is behind its backoff.
    const early = await kit.claimable(sub.claim_id);
    expect(early.status).toBe(429);
    expect(Number(early.retryAfter)).toBeGreaterThan(500);
    expect(early.body).toEqual({ message: expect.stringMatching(/not claimable yet/) });

    expect((await notify(event('PUT', 'Succeeded', '2026-11-23T08:02:00Z'))).status).toBe(200);
    expect(await kit.subscription('ProviderB', SUB)).toMatchObject({ state: 'Running' });
    expect(await kit.claimable(sub.claim_id)).toMatchObject({ status: 200, body: { isClaimable: true, claimID: sub.claim_id } });

    // A redelivery and a late, older notification change nothing.
    const before = await kit.footprint();
    expect((await notify(event('PUT', 'Accepted', '2026-11-23T08:00:00Z'))).status).toBe(200);
    expect((await notify(event('PUT', 'Failed', '2026-11-23T08:01:30Z'))).status).toBe(200);
    expect(await kit.footprint()).toEqual({ ...before, answered: before.answered + 1 });
    expect(await kit.subscription('ProviderB', SUB)).toMatchObject({ state: 'Running' });

    expect((await notify(event('DELETE', 'Deleting', '2026-11-23T08:03:00Z'))).status).toBe(200);
    expect(await kit.subscription('ProviderB', SUB)).toMatchObject({ state: 'Deleting' });
    expect((await kit.contractsOf(sub.subscriber_id)).map((c) => c.revoked)).toEqual([true]);
    expect((await notify(event('DELETE', 'Failed', '2026-11-23T08:04:00Z'))).status).toBe(200);
    expect(await kit.subscription('ProviderB', SUB)).toMatchObject({ state: 'DeletionFailed' });
    expect((await notify(event('DELETE', 'Deleted', '2026-11-23T08:05:00Z'))).status).toBe(200);
    expect(await kit.subscription('ProviderB', SUB)).toMatchObject({ state: 'Deleted' });

    const audit = await kit.auditOf('ProviderB', SUB);
    expect(audit.filter((a) => a.status !== 'Failed').map((a) => [a.operation_type, a.status])).toEqual([
      ['PUT', 'Succeeded'],
      ['BIND', 'Succeeded'],
      ['PUT', 'Succeeded'],
      ['PUT', 'Replayed'],
      ['PUT', 'Ignored'],
      ['DELETE', 'Succeeded'],
      ['DELETE', 'Succeeded'],
      ['DELETE', 'Succeeded'],
    ]);
    expect(JSON.stringify(audit)).not.toContain('buyer-Secret-pw-1');
    expect(JSON.stringify(audit)).not.toContain(SECRET);
  });

  it('maps PUT Failed to Failed, and binds an installer once when two subscriptions race for it', async () => {
    const failedSub = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
    expect((await notify(event('PUT', 'Failed', '2026-11-23T08:10:00Z', failedSub))).status).toBe(200);
    expect(await kit.subscription('ProviderB', failedSub)).toMatchObject({ state: 'Failed' });

    const id = await kit.installer('ProviderB', { product: 'productdb' });
    const subs = ['2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a', '3e4f5a6b-7c8d-4e9f-8a1b-2c3d4e5f6a7b'];
    const results = await Promise.all(
      subs.map((s) => notify({ ...event('BIND', '', '2026-11-23T08:11:00Z', s), bindingInfo: kit.binding('ProviderB', id) })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
    const winners = (await Promise.all(subs.map((s) => kit.subscription('ProviderB', s)))).filter(Boolean);
    expect(winners).toHaveLength(1);
    expect(winners[0]).toMatchObject({ bounded_installer_id: id, state: 'Bounded' });
  });

  it('answers 30 concurrent deliveries of one BIND as the first was answered, and binds once', async () => {
    const id = await kit.installer('ProviderB', { product: 'productdb' });
    const sub = '4f5a6b7c-8d9e-4f0a-9b1c-2d3e4f5a6b7c';
    const bind = { ...event('BIND', '', '2026-11-23T08:12:00Z', sub), bindingInfo: kit.binding('ProviderB', id) };
    const results = await Promise.all(Array.from({ length: 30 }, () => notify(bind)));
    expect(results.map((r) => [r.status, r.body?.link?.split('?')[0]])).toEqual(
      Array(30).fill([200, expect.stringContaining(`/installers/${id}/archive`)]),
    );
    expect(await kit.contractsOf((await kit.subscription('ProviderB', sub)).subscriber_id)).toHaveLength(1);
    const audit = (await kit.auditOf('ProviderB', sub)).map((a) => a.status);
    expect([audit.filter((s) => s === 'Succeeded').length, audit.filter((s) => s === 'Replayed').length, audit.length]).toEqual([
      1, 29, 30,
    ]);
  });
});
