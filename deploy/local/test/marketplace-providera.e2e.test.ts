import { bootTestPlatform, type TestPlatform } from './harness';
import { marketplaceKit } from './marketplace';

/**
 * The webhook listener on a first-provider marketplace deployment (docs/marketplaces.md), through the
 * gateway as the marketplace reaches it: source ranges, validation, binding with its {link} and archive, the
 * subscriber's organization, claim and contract, redeliveries and races, POST only, and the installer route.
 */
describe('marketplace listener on ProviderAMarketplace', () => {
  let t: TestPlatform;
  const kit = marketplaceKit(() => t);
  const PATH = '/marketplaces/providera/notification/resource';
  // The gateway believes the test's X-Forwarded-For (TRUST_PROXY), so the test can speak from any address.
  const from = (address: string) => ({ 'x-forwarded-for': address });
  const inRange = from('198.51.100.20');
  const notify = (body: unknown, headers = inRange) => kit.post(PATH, body, headers);

  beforeAll(async () => {
    t = await bootTestPlatform({
      DEPLOYMENT_TYPE: 'ProviderAMarketplace',
      TRUST_PROXY: 'loopback',
      PROVIDERA_ALLOWED_CIDRS: '+198.51.100.0/24',
      MARKETPLACE_CLAIM_BACKOFF_SECONDS: '0',
    });
    await t.signUp('buyer');
  }, 120_000);
  afterAll(() => t?.stop());

  it('lets only site admins prepare installers (beyond the spec), with validated options', async () => {
    expect((await t.api('buyer', 'POST', '/marketplaces/installers', { marketplace: 'ProviderA' })).status).toBe(403);
    expect((await t.api(undefined, 'GET', '/marketplaces/installers')).status).toBe(401);
    const bad = await t.api('root', 'POST', '/marketplaces/installers', { marketplace: 'ProviderX' });
    expect(bad.status).toBe(400);
    const unknown = await t.api('root', 'POST', '/marketplaces/installers', { marketplace: 'ProviderA', options: { product: 'nosuch' } });
    expect(unknown).toMatchObject({ status: 400, body: { message: expect.stringMatching(/not a product of the catalog/) } });
    const id = await kit.installer('ProviderA', { product: 'productdb', tier: 'gold' });
    const listed = await t.api('root', 'GET', '/marketplaces/installers?marketplace=ProviderA&unbound=true');
    expect(listed.body.find((i: { id: string }) => i.id === id)).toMatchObject({
      marketplace: 'ProviderA',
      options: { product: 'productdb', tier: 'gold' },
      createdBy: 'root',
      boundSubscriptionId: '',
    });
  });

  it('refuses notifications from outside the provider’s ranges with 403, leaving nothing behind', async () => {
    const id = await kit.installer('ProviderA');
    const before = await kit.footprint();
    for (const address of ['203.0.113.7', '127.0.0.1', '2001:db8::1']) {
      const res = await notify({ bindingInfo: kit.binding('ProviderA', id) }, from(address));
      expect(res).toMatchObject({ status: 403, body: { message: 'the notification does not come from an address of ProviderA' } });
    }
    expect(await kit.footprint()).toEqual(before);
    expect(await kit.auditOf('ProviderA', id)).toEqual([]);
  });

  it('refuses invalid notifications with 400, leaving nothing behind but their audit entries (no password)', async () => {
    const id = await kit.installer('ProviderA');
    const before = await kit.footprint();
    const cases: [unknown, number, RegExp][] = [
      [{ eventType: 'subscribe-success' }, 400, /bindingInfo is required/],
      [{ bindingInfo: kit.binding('ProviderC', id) }, 400, /bindingInfo.marketplace must be ProviderA/],
      [{ bindingInfo: kit.binding('ProviderA', id, { clusterId: '' }) }, 400, /clusterId: must not be empty/],
      [{ bindingInfo: kit.binding('ProviderA', id, { options: ['a'] }) }, 400, /options: must be a JSON object/],
      [{ bindingInfo: kit.binding('ProviderA', 'not-an-installer') }, 400, /installer not-an-installer does not exist/],
      ['{"bindingInfo": {', 400, /not valid JSON/],
    ];
    for (const [body, status, message] of cases) {
      const res = await notify(body);
      expect([res.status, res.body.message]).toEqual([status, expect.stringMatching(message)]);
    }
    expect(await kit.footprint()).toEqual(before);
    const refused = await kit.auditOf('ProviderA', id);
    expect(refused.map((a) => a.status)).toEqual(['Failed', 'Failed', 'Failed']);
    expect(JSON.stringify(refused)).not.toContain('buyer-Secret-pw-1');
  });

  it('binds an installer: {link} to its archive, a standalone org with a claim and a contract; a redelivery answers alike', async () => {
    const id = await kit.installer('ProviderA', { product: 'productdb' });
    const notification = {
      eventType: 'subscribe-success',
      eventTime: '2026-11-23T07:00:00Z',
      bindingInfo: kit.binding('ProviderA', id, { providerAAccountID: '210987654321', options: { replicas: 3 } }),
    };
    const bound = await notify(notification);
    expect(bound.status).toBe(200);
    expect(Object.keys(bound.body)).toEqual(['link']);
    expect(bound.body.link.startsWith(`${kit.root()}/marketplaces/installers/${id}/archive?expires=`)).toBe(true);

    const archive = await kit.download(bound.body.link);
    expect([archive.status, archive.type]).toEqual([200, 'application/gzip']);
    expect(archive.tar).toContain(`${id}/values.yaml`);
    expect(archive.tar).toContain(`${id}/install.sh`);
    expect(archive.tar).toContain('id: 5e6f7a8b-0000-4000-8000-00000000c1a5');
    expect(archive.tar).toContain('accountID: "210987654321"');
    expect(archive.tar).toContain('replicas: 3');
    expect(archive.tar).not.toContain('buyer-Secret-pw-1');

    const sub = await kit.subscription('ProviderA', id);
    expect(sub).toMatchObject({
      state: 'Bounded',
      bounded_installer_id: id,
      is_revocable: true,
      no_of_billing_event_sent: 0,
      requester_id: t.ids.root,
    });
    const contracts = await kit.contractsOf(sub.subscriber_id);
    expect(contracts.map((c) => [c.id, c.product, c.revoked, c.name])).toEqual([
      [sub.contract_ids[0], 'productdb', false, `ProviderA subscription ${id}`],
    ]);
    expect(await kit.membersOf(sub.subscriber_id, t.ids.root)).toEqual(['root']);

    // The marketplace redelivers: the same answer, nothing changes.
    const before = await kit.footprint();
    const again = await notify(notification);
    expect(again.status).toBe(200);
    expect(again.body.link.split('?')[0]).toBe(bound.body.link.split('?')[0]);
    expect(await kit.footprint()).toEqual(before);
    expect(await kit.contractsOf(sub.subscriber_id)).toHaveLength(1);
    // The same binding with a new eventTime: its link again, nothing changes.
    const resent = await notify({ ...notification, eventTime: '2026-11-23T07:04:00Z' });
    expect([resent.status, resent.body.link.split('?')[0]]).toEqual([200, bound.body.link.split('?')[0]]);
    expect(await kit.footprint()).toEqual(before);
    // Another binding for the bound installer (another cluster) is 403.
    const other = await notify({
      ...notification,
      eventTime: '2026-11-23T07:05:00Z',
      bindingInfo: { ...notification.bindingInfo, clusterId: '5e6f7a8b-0000-4000-8000-00000000c1a6' },
    });
    expect(other).toMatchObject({ status: 403, body: { message: `installer ${id} is already bound` } });
    expect((await kit.auditOf('ProviderA', id)).map((a) => a.status)).toEqual(['Succeeded', 'Replayed', 'Replayed', 'Failed']);

    // The claim: claimable (no backoff here), 409 once claimed, then the buyer owns the organization.
    expect(await kit.claimable(sub.claim_id)).toMatchObject({ status: 200, body: { isClaimable: true, claimID: sub.claim_id } });
    await kit.claimOrg(sub.claim_id, t.ids.buyer);
    expect(await kit.claimable(sub.claim_id)).toMatchObject({
      status: 409,
      body: { message: expect.stringMatching(/already been claimed/) },
    });
    expect(await kit.membersOf(sub.subscriber_id, t.ids.root)).toEqual(['buyer']);
    expect(await kit.claimable('00000000-0000-4000-8000-000000000000')).toMatchObject({
      status: 404,
      body: { message: expect.any(String) },
    });
  });

  it('binds an installer once when notifications race for it', async () => {
    const id = await kit.installer('ProviderA');
    const times = ['2026-11-23T07:10:01Z', '2026-11-23T07:10:02Z', '2026-11-23T07:10:03Z', '2026-11-23T07:10:04Z'];
    const results = await Promise.all(times.map((eventTime) => notify({ eventTime, bindingInfo: kit.binding('ProviderA', id) })));
    // One binding sent four times with different eventTimes: each answered with the link, bound once.
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const sub = await kit.subscription('ProviderA', id);
    expect(await kit.contractsOf(sub.subscriber_id)).toHaveLength(1);
    // The same delivery racing itself binds once and both get the link.
    const twin = await kit.installer('ProviderA');
    const same = { eventTime: '2026-11-23T07:11:00Z', bindingInfo: kit.binding('ProviderA', twin) };
    const pair = await Promise.all([notify(same), notify(same)]);
    expect(pair.map((r) => r.status)).toEqual([200, 200]);
    expect(await kit.contractsOf((await kit.subscription('ProviderA', twin)).subscriber_id)).toHaveLength(1);
  });

  it('takes notifications by POST only', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await fetch(`${kit.root()}${PATH}`, { method });
      expect(res.status).toBe(405);
      expect(await res.json()).toEqual({ message: `${method} is not allowed here; notifications are POST only` });
    }
    expect((await fetch(`${kit.root()}/version`)).status).toBe(200);
  });
});
