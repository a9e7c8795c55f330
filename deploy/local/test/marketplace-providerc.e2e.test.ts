import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bootTestPlatform, type TestPlatform } from './harness';
import { marketplaceKit } from './marketplace';

/**
 * The webhook listener on a third-provider marketplace deployment (docs/marketplaces.md): the secret
 * and the designated test installer, binding with its {link}, redeliveries and races, the claimable check asked
 * of a central marketplace server; and its absence (the web frontend's HTML) on hosted and self-hosted deployments.
 */
describe('marketplace listener on ProviderCMarketplace', () => {
  let t: TestPlatform;
  let central: http.Server;
  const centralAsked: string[] = [];
  const kit = marketplaceKit(() => t);
  const SECRET = 'provider-c-secret-for-the-e2e';
  const TEST_INSTALLER = 'providerc-listing-check';
  const notify = (body: unknown, secret: string | null = SECRET) =>
    kit.post(`/marketplaces/providerc/notification/resource${secret === null ? '' : `?secret=${encodeURIComponent(secret)}`}`, body);

  beforeAll(async () => {
    // A stand-in for the central marketplace server: claims starting with 1 are claimable, 2 wait, 3 are taken.
    central = http.createServer((req, res) => {
      centralAsked.push(req.url!);
      const id = /standalone-organizations\/([^/]+)\/claimable$/.exec(req.url!)?.[1] ?? '';
      const reply = (status: number, body: object, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      if (id.startsWith('1')) reply(200, { isClaimable: true, claimID: id });
      else if (id.startsWith('2')) reply(429, { message: 'the organization is still being provisioned' }, { 'retry-after': '45' });
      else if (id.startsWith('3')) reply(409, { message: 'already claimed' });
      else reply(404, { message: 'no such claim' });
    });
    await new Promise<void>((resolve) => central.listen(0, '127.0.0.1', resolve));
    t = await bootTestPlatform({
      DEPLOYMENT_TYPE: 'ProviderCMarketplace',
      MARKETPLACE_API_SECRET: SECRET,
      PROVIDERC_TEST_INSTALLER_ID: TEST_INSTALLER,
      MARKETPLACE_CENTRAL_URL: `http://127.0.0.1:${(central.address() as AddressInfo).port}/marketplace/api/v1`,
    });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    central?.close();
  });

  it('refuses a wrong or missing secret with 403, storing nothing; only the designated test installer needs none', async () => {
    const id = await kit.installer('ProviderC');
    const before = await kit.footprint();
    for (const secret of [null, 'provider-c-secret-for-the-e2f']) {
      expect(await notify({ bindingInfo: kit.binding('ProviderC', id) }, secret)).toMatchObject({
        status: 403,
        body: { message: 'the secret does not match' },
      });
    }
    // Naming the test installer in an otherwise invalid body does not open the door to anything else.
    expect((await notify({ bindingInfo: { installerId: TEST_INSTALLER } }, null)).status).toBe(400);
    expect(await kit.footprint()).toEqual(before);

    const testInstaller = kit
      .db()
      .table('installers')
      .insert({ id: TEST_INSTALLER, marketplace: 'ProviderC', options: JSON.stringify({ product: 'productdb' }) });
    await testInstaller;
    const listing = await notify({ eventType: 'listing-check', bindingInfo: kit.binding('ProviderC', TEST_INSTALLER) }, null);
    expect(listing.status).toBe(200);
    expect(listing.body.link).toContain(`/installers/${TEST_INSTALLER}/archive`);
  });

  it('validates the notification (400), binds with {link}, answers a redelivery alike and a bound installer with 403', async () => {
    const id = await kit.installer('ProviderC', { product: 'productvault' });
    const before = await kit.footprint();
    for (const [body, message] of [
      [{ eventType: 'subscribe' }, /bindingInfo is required/],
      [{ bindingInfo: kit.binding('ProviderB', id) }, /bindingInfo.marketplace must be ProviderC/],
      [{ bindingInfo: kit.binding('ProviderC', 'missing-installer') }, /installer missing-installer does not exist/],
      [{ bindingInfo: kit.binding('ProviderC', id, { adminUsername: 'not a name!' }) }, /adminUsername: must be a user name/],
      [{ eventTime: 'yesterday', bindingInfo: kit.binding('ProviderC', id) }, /eventTime: must be an RFC3339 date-time/],
    ] as [unknown, RegExp][]) {
      const res = await notify(body);
      expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(message)]);
    }
    expect(await kit.footprint()).toEqual(before);

    const notification = {
      eventType: 'subscribe',
      bindingInfo: kit.binding('ProviderC', id, { domainWhiteList: ['one.example.com', 'two.example.org'] }),
    };
    const bound = await notify(notification);
    expect(bound.status).toBe(200);
    const archive = await kit.download(bound.body.link);
    expect(archive.tar).toContain('- one.example.com');
    expect(archive.tar).toContain('- two.example.org');
    const sub = await kit.subscription('ProviderC', id);
    expect((await kit.contractsOf(sub.subscriber_id)).map((c) => c.product)).toEqual(['productvault']);

    const after = await kit.footprint();
    const again = await notify(notification);
    expect(again.status).toBe(200);
    expect(await kit.footprint()).toEqual(after);
    expect((await notify({ ...notification, eventTime: '2026-11-23T08:59:00Z' })).status).toBe(200);
    expect(await kit.footprint()).toEqual(after);
    const otherCluster = { ...notification.bindingInfo, clusterId: '5e6f7a8b-0000-4000-8000-00000000c1a7' };
    expect(await notify({ ...notification, eventTime: '2026-11-23T09:00:00Z', bindingInfo: otherCluster })).toMatchObject({
      status: 403,
      body: { message: `installer ${id} is already bound` },
    });
    // An expired link is refused; a fresh one comes with every answer.
    expect((await kit.download(again.body.link.replace(/expires=\d+/, 'expires=1700000000'))).status).toBe(403);
  });

  it('binds an installer once when notifications race for it', async () => {
    const id = await kit.installer('ProviderC');
    const results = await Promise.all(
      ['2026-11-23T09:10:01Z', '2026-11-23T09:10:02Z', '2026-11-23T09:10:03Z'].map((eventTime) =>
        notify({ eventTime, bindingInfo: kit.binding('ProviderC', id) }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await kit.contractsOf((await kit.subscription('ProviderC', id)).subscriber_id)).toHaveLength(1);
  });

  it('asks the central marketplace server for the claimable check and answers as it did', async () => {
    expect(await kit.claimable('11111111-2222-4333-8444-555555555555')).toEqual({
      status: 200,
      body: { isClaimable: true, claimID: '11111111-2222-4333-8444-555555555555' },
      retryAfter: null,
    });
    expect(await kit.claimable('21111111-2222-4333-8444-555555555555')).toEqual({
      status: 429,
      body: { message: 'the organization is still being provisioned' },
      retryAfter: '45',
    });
    expect(await kit.claimable('31111111-2222-4333-8444-555555555555')).toMatchObject({
      status: 409,
      body: { message: 'already claimed' },
    });
    expect(await kit.claimable('41111111-2222-4333-8444-555555555555')).toMatchObject({ status: 404, body: { message: 'no such claim' } });
    expect(centralAsked).toHaveLength(4);
    // What is not a claim ID never leaves the platform.
    expect((await kit.claimable('not-a-claim')).status).toBe(404);
    expect(centralAsked).toHaveLength(4);
  });
});

describe.each(['Hosted', 'SelfHostedProduction'])('no marketplace listener on %s', (deployment) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: deployment, MARKETPLACE_API_SECRET: 'a-secret-that-would-match' });
  }, 120_000);
  afterAll(() => t?.stop());

  it('falls through to the web frontend (200 text/html) on every listener path, and has no installer route', async () => {
    const root = `${t.platform.url}marketplace/api/v1`;
    for (const [method, path] of [
      ['GET', '/version'],
      ['POST', '/marketplaces/providerc/notification/resource?secret=a-secret-that-would-match'],
      ['GET', '/marketplaces/standalone-organizations/11111111-2222-4333-8444-555555555555/claimable'],
    ]) {
      const res = await fetch(`${root}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? '{}' : undefined,
      });
      expect([method, path, res.status, res.headers.get('content-type')]).toEqual([
        method,
        path,
        200,
        expect.stringMatching(/^text\/html/),
      ]);
    }
    expect((await t.api('root', 'POST', '/marketplaces/installers', { marketplace: 'ProviderC' })).status).toBe(404);
  });
});
