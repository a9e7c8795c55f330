import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Database } from '@platform/db';
import { marketplaceListenerV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { freePort } from '@platform/testing';
import { createMarketplaceListenerApp } from '../src/app';
import { readArchive } from './archive-reader';
import { fakeDirectory, type FakeDirectory } from './fake-directory';

// The listener's notification routes over HTTP against a stand-in for orgs-teams and contracts-licensing:
// validation, authentication, state mapping, exactly-once effects, the audit log, the link and its archive.

const SECRET = 'a-marketplace-api-secret-of-ours';
const APP_ID = (sub: string, name = 'platform-app') =>
  `/subscriptions/${sub}/resourceGroups/buyers-rg/providers/Microsoft.Solutions/applications/${name}`;
const SUB_B = '6f1a7c2e-2b1d-4c5e-9a8b-0c1d2e3f4a5b';

describe('marketplace notifications', () => {
  let dir: FakeDirectory;
  let app: AppUnderTest;
  let db: Database;
  let base: string;
  let grpc: PromiseClient<typeof marketplaceListenerV1.MarketplaceListenerServiceService>;

  beforeAll(async () => {
    dir = fakeDirectory();
    // The links are built on PUBLIC_URL, here the listener's own address so that the test can follow them.
    const port = await freePort();
    app = await startAppForTest(createMarketplaceListenerApp({ directory: () => dir }), {
      MARKETPLACE_HTTP_PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}/`,
      MARKETPLACE_API_SECRET: SECRET,
      // The test client is its own proxy: X-Forwarded-For names the "marketplace".
      MARKETPLACE_TRUSTED_PROXIES: 'loopback',
      PROVIDERA_ALLOWED_CIDRS: '+10.0.0.0/8',
      PROVIDERC_TEST_INSTALLER_ID: 'providerc-listing-test',
      MARKETPLACE_CLAIM_BACKOFF_SECONDS: '120',
    });
    db = app.running.ctx.db!;
    base = `http://127.0.0.1:${app.running.httpPort}/marketplace/api/v1`;
    grpc = createClient(marketplaceListenerV1.MarketplaceListenerServiceService, app.address, { name: 'marketplace-listener' });
  });
  afterAll(async () => {
    grpc?.close();
    await app?.stop();
  });

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const fromA: Record<string, string> = { 'x-forwarded-for': '10.20.30.40' };
  const providerA = (body: unknown, headers = fromA) => post('/marketplaces/providera/notification/resource', body, headers);
  // secret null: none sent.
  const providerB = (body: unknown, secret: string | null = SECRET) =>
    post(`/marketplaces/providerb/notification/resource${secret === null ? '' : `?secret=${encodeURIComponent(secret)}`}`, body);
  const providerC = (body: unknown, secret: string | null = SECRET) =>
    post(`/marketplaces/providerc/notification/resource${secret === null ? '' : `?secret=${encodeURIComponent(secret)}`}`, body);
  const installer = async (marketplace: string, options: object = { product: 'productdb' }) =>
    (await grpc.createInstaller({ marketplace, optionsJson: JSON.stringify(options), actor: 'root' })).id;
  const binding = (marketplace: string, installerId: string, extra: object = {}) => ({
    marketplace,
    installerId,
    clusterId: 'a1b2c3d4-0000-4000-8000-000000000001',
    adminUsername: 'buyer-admin',
    adminPassword: 'S3cret-Passw0rd!',
    domainWhiteList: ['buyer.example.com'],
    options: { replicas: 2 },
    ...extra,
  });
  const subscription = (marketplace: string, id: string) => db.table('subscriptions').where({ marketplace, subscription_id: id }).first();
  const counts = async () => {
    const n = async (t: string) => Number((await db.table(t).count({ n: '*' }))[0].n);
    return {
      subscriptions: await n('subscriptions'),
      notifications: await n('notifications'),
      audit: await n('audit_events'),
      bound: Number((await db.table('installers').whereNotNull('subscription_id').count({ n: '*' }))[0].n),
    };
  };

  describe('installers (gRPC)', () => {
    it('refuses an unknown marketplace, options that are not an object and a product the catalog lacks', async () => {
      const cases: [string, string, RegExp][] = [
        ['ProviderD', '{}', /marketplace must be/],
        ['ProviderA', '[1]', /options must be a JSON object/],
        ['ProviderA', '{not json', /options must be a JSON object/],
        ['ProviderA', '{"product":"nosuch"}', /not a product of the catalog/],
      ];
      for (const [marketplace, optionsJson, message] of cases) {
        await expect(grpc.createInstaller({ marketplace, optionsJson, actor: 'root' })).rejects.toMatchObject({
          kind: 'input',
          message: expect.stringMatching(message),
        });
      }
    });

    it('lists installers of a marketplace, unbound ones when asked', async () => {
      const id = await installer('ProviderC', { product: 'productbackup', plan: 'team' });
      const listed = await grpc.listInstallers({ marketplace: 'ProviderC', unboundOnly: true, limit: 0 });
      expect(listed.installers.find((i) => i.id === id)).toMatchObject({
        marketplace: 'ProviderC',
        createdBy: 'root',
        boundSubscriptionId: '',
        boundUnix: 0,
      });
      expect(JSON.parse(listed.installers.find((i) => i.id === id)!.optionsJson)).toEqual({ product: 'productbackup', plan: 'team' });
      expect(
        (await grpc.listInstallers({ marketplace: 'ProviderA', unboundOnly: false, limit: 0 })).installers.every(
          (i) => i.marketplace === 'ProviderA',
        ),
      ).toBe(true);
    });
  });

  describe('provider A', () => {
    it('refuses sources outside its ranges with 403 and stores nothing; a forwarded header counts only from a trusted proxy', async () => {
      const id = await installer('ProviderA');
      const before = await counts();
      const outside = await providerA({ bindingInfo: binding('ProviderA', id) }, { 'x-forwarded-for': '203.0.113.9' });
      expect(outside).toMatchObject({ status: 403, body: { message: 'the notification does not come from an address of ProviderA' } });
      // Without a forwarded header the peer itself (loopback) is the source, which is not the provider's.
      expect((await providerA({ bindingInfo: binding('ProviderA', id) }, {} as typeof fromA)).status).toBe(403);
      expect(await counts()).toEqual(before);
    });

    it('validates the notification: 400 for each wrong part, audited without the password', async () => {
      const id = await installer('ProviderA');
      const cases: [unknown, RegExp][] = [
        [{}, /bindingInfo is required/],
        [[1, 2], /notification must be a JSON object/],
        [{ bindingInfo: binding('ProviderB', id) }, /bindingInfo.marketplace must be ProviderA/],
        [{ bindingInfo: binding('ProviderA', id, { clusterId: '  ' }) }, /bindingInfo.clusterId: must not be empty/],
        [{ bindingInfo: binding('ProviderA', id, { options: 'fast' }) }, /bindingInfo.options: must be a JSON object/],
        [{ bindingInfo: { ...binding('ProviderA', id), options: undefined } }, /bindingInfo.options must be a JSON object/],
        [{ bindingInfo: binding('ProviderA', id, { domainWhiteList: ['not a domain'] }) }, /domainWhiteList.0: must be a domain name/],
        [{ bindingInfo: binding('ProviderA', 'no-such-installer') }, /installer no-such-installer does not exist/],
        [{ bindingInfo: binding('ProviderA', id, { options: { product: 'nosuch' } }) }, /not a product of the catalog/],
        ['{"bindingInfo":', /not valid JSON/],
      ];
      for (const [body, message] of cases) {
        const res = await providerA(body);
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(message);
      }
      expect(await subscription('ProviderA', id)).toBeUndefined();
      const audited = await db.table('audit_events').where({ marketplace: 'ProviderA', subscription_id: 'no-such-installer' }).first();
      expect(audited).toMatchObject({ status: 'Failed', operation_type: 'BIND', description: expect.stringMatching(/does not exist/) });
      expect(JSON.stringify(await db.table('audit_events').select('data'))).not.toContain('S3cret-Passw0rd!');
    });

    it('binds once: {link} to the archive, a redelivery answers alike and changes nothing, another notification is 403', async () => {
      const id = await installer('ProviderA', { product: 'productdb', chart: { version: '1.2.3' } });
      const notification = {
        eventType: 'subscribe-success',
        eventTime: '2026-11-23T06:00:00Z',
        bindingInfo: binding('ProviderA', id, { providerAAccountID: '123456789012' }),
      };
      // A host named by the request (here through a trusted proxy's X-Forwarded-Host) never makes the link.
      const first = await providerA(notification, { ...fromA, 'x-forwarded-host': 'evil.example' });
      expect(first.status).toBe(200);
      expect(Object.keys(first.body)).toEqual(['link']);
      expect(first.body.link).toMatch(new RegExp(`^${base}/marketplaces/installers/${id}/archive\\?expires=\\d+&signature=`));
      expect(dir.provisioned.filter((p) => p.subscriptionId === id)).toEqual([
        expect.objectContaining({ marketplace: 'ProviderA', product: 'productdb', backoffSeconds: 120, flagged: false }),
      ]);
      expect(await subscription('ProviderA', id)).toMatchObject({
        state: 'Bounded',
        bounded_installer_id: id,
        subscriber_id: expect.any(Number),
        claim_id: expect.any(String),
        is_revocable: true,
        no_of_billing_event_sent: 0,
        billing_details: { providerAAccountID: '123456789012' },
      });

      const archive = await fetch(first.body.link);
      expect(archive.status).toBe(200);
      expect(archive.headers.get('content-type')).toBe('application/gzip');
      const files = await readArchive(Buffer.from(await archive.arrayBuffer()));
      expect(Object.keys(files).sort()).toEqual([`${id}/install.sh`, `${id}/values.yaml`]);
      expect(files[`${id}/install.sh`].mode).toBe(0o755);
      expect(files[`${id}/install.sh`].text).toContain("EXPECTED_CLUSTER_ID='a1b2c3d4-0000-4000-8000-000000000001'");
      const values = files[`${id}/values.yaml`].text;
      expect(values).toContain('id: a1b2c3d4-0000-4000-8000-000000000001');
      expect(values).toContain('username: buyer-admin');
      expect(values).toContain('- buyer.example.com');
      expect(values).toContain('replicas: 2');
      expect(values).toContain('version: 1.2.3');
      expect(values).toMatch(/passwordHash: scrypt\$16384\$8\$1\$/);
      expect(values).not.toContain('S3cret-Passw0rd!');

      const before = await counts();
      const again = await providerA(notification);
      expect(again.status).toBe(200);
      expect(again.body.link.split('?')[0]).toBe(first.body.link.split('?')[0]);
      expect(dir.provisioned.filter((p) => p.subscriptionId === id)).toHaveLength(1);
      expect(await counts()).toEqual({ ...before, audit: before.audit + 1 });
      expect(await db.table('audit_events').where({ subscription_id: id }).orderBy('id').pluck('status')).toEqual([
        'Succeeded',
        'Replayed',
      ]);

      // The same binding sent again with a new eventTime: its link, nothing changed.
      const resent = await providerA({ ...notification, eventTime: '2026-11-23T07:00:00Z' });
      expect(resent.status).toBe(200);
      expect(resent.body.link.split('?')[0]).toBe(first.body.link.split('?')[0]);
      expect(await counts()).toEqual({ ...before, audit: before.audit + 2 });
      // Another binding for the bound installer (another cluster) is 403.
      const other = await providerA({
        ...notification,
        eventTime: '2026-11-23T07:01:00Z',
        bindingInfo: { ...notification.bindingInfo, clusterId: 'a1b2c3d4-0000-4000-8000-000000000002' },
      });
      expect(other).toMatchObject({ status: 403, body: { message: `installer ${id} is already bound` } });
      expect(dir.provisioned.filter((p) => p.subscriptionId === id)).toHaveLength(1);
      expect(JSON.stringify(await db.table('audit_events').where({ subscription_id: id }).select('data'))).not.toContain(
        'S3cret-Passw0rd!',
      );
    });

    it('binds an installer once when notifications of one binding race, and answers each with its link', async () => {
      const id = await installer('ProviderA');
      const results = await Promise.all(
        ['2026-11-23T06:00:01Z', '2026-11-23T06:00:02Z', '2026-11-23T06:00:03Z'].map((eventTime) =>
          providerA({ eventTime, bindingInfo: binding('ProviderA', id) }),
        ),
      );
      expect(results.map((r) => [r.status, r.body.link.split('?')[0]])).toEqual(
        Array(3).fill([200, expect.stringContaining(`/installers/${id}/archive`)]),
      );
      expect(dir.provisioned.filter((p) => p.subscriptionId === id)).toHaveLength(1);
      expect(await db.table('notifications').where({ subscription_id: id }).pluck('event_key')).toHaveLength(1);
    });

    it('answers 30 concurrent deliveries of one BIND as the first was answered, and binds once', async () => {
      const id = await installer('ProviderB');
      const sub = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
      const bind = {
        eventType: 'BIND',
        applicationId: APP_ID(sub),
        eventTime: '2026-11-23T06:05:00Z',
        plan: { product: 'productdb', name: 'standard' },
        bindingInfo: binding('ProviderB', id),
      };
      const results = await Promise.all(Array.from({ length: 30 }, () => providerB(bind)));
      expect(results.map((r) => [r.status, r.body?.link?.split('?')[0]])).toEqual(
        Array(30).fill([200, expect.stringContaining(`/installers/${id}/archive`)]),
      );
      expect(dir.provisioned.filter((p) => p.subscriptionId === sub)).toHaveLength(1);
      // One success and 29 replays in the audit log: no failure that did not happen.
      const audit = await db.table('audit_events').where({ subscription_id: sub }).pluck('status');
      expect([audit.filter((s) => s === 'Succeeded').length, audit.filter((s) => s === 'Replayed').length, audit.length]).toEqual([
        1, 29, 30,
      ]);
    });

    it('binds an installer once when two subscriptions race for it; the other is 403', async () => {
      const id = await installer('ProviderB');
      const subs = ['8b9c0d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e', '9c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f'];
      const results = await Promise.all(
        subs.map((s) =>
          providerB({
            eventType: 'BIND',
            applicationId: APP_ID(s),
            eventTime: '2026-11-23T06:06:00Z',
            plan: { product: 'productdb' },
            bindingInfo: binding('ProviderB', id),
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
      expect(results.find((r) => r.status === 403)!.body.message).toMatch(/already bound/);
    });

    it('takes the binding back when provisioning the subscriber fails, so a retry can bind', async () => {
      const id = await installer('ProviderA');
      dir.failNextProvision = 'unavailable';
      const failed = await providerA({ eventTime: '2026-11-23T06:10:00Z', bindingInfo: binding('ProviderA', id) });
      expect(failed).toMatchObject({ status: 503, body: { message: 'contracts-licensing is unavailable' } });
      expect(await subscription('ProviderA', id)).toBeUndefined();
      expect(await db.table('installers').where({ id }).first()).toMatchObject({ subscription_id: null, binding: null });
      expect(await db.table('notifications').where({ subscription_id: id }).first()).toBeUndefined();
      expect(dir.deprovisioned).toContain(`ProviderA/${id}`);
      // The marketplace retries the same delivery: now it binds.
      expect((await providerA({ eventTime: '2026-11-23T06:10:00Z', bindingInfo: binding('ProviderA', id) })).status).toBe(200);
      expect(await db.table('audit_events').where({ subscription_id: id }).orderBy('id').pluck('status')).toEqual(['Failed', 'Succeeded']);
    });

    it('takes the organization back too when contracts-licensing refuses the contract half-way', async () => {
      const id = await installer('ProviderA');
      dir.failNextProvision = 'refused';
      const before = dir.deprovisioned.length;
      const refused = await providerA({ eventTime: '2026-11-23T06:15:00Z', bindingInfo: binding('ProviderA', id) });
      expect(refused).toMatchObject({ status: 400, body: { message: 'end: the contract period is invalid' } });
      expect(dir.deprovisioned.slice(before)).toContain(`ProviderA/${id}`);
      expect(await subscription('ProviderA', id)).toBeUndefined();
      expect(await db.table('installers').where({ id }).first()).toMatchObject({ subscription_id: null });
    });

    it('answers a body over 256 KiB with 413, as the gateway does, and stores nothing', async () => {
      const before = await counts();
      const big = await providerA({
        eventTime: '2026-11-23T06:40:00Z',
        bindingInfo: binding('ProviderA', 'x'),
        padding: 'x'.repeat(300_000),
      });
      expect(big).toMatchObject({ status: 413, body: { message: 'the notification is too large (at most 256 KiB)' } });
      expect(await counts()).toEqual(before);
    });

    it('answers a GET on a notification route with 405 (POST only)', async () => {
      for (const p of ['providera', 'providerb', 'providerc'])
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const res = await fetch(`${base}/marketplaces/${p}/notification/resource`, { method });
          expect([res.status, res.headers.get('allow')]).toEqual([405, 'POST']);
          expect(await res.json()).toEqual({ message: `${method} is not allowed here; notifications are POST only` });
        }
    });

    it('refuses a tampered or expired download link with 403', async () => {
      const id = await installer('ProviderA');
      const { body } = await providerA({ eventTime: '2026-11-23T06:20:00Z', bindingInfo: binding('ProviderA', id) });
      const forged = body.link.replace(/signature=./, (s: string) => (s.endsWith('A') ? 'signature=B' : 'signature=A'));
      expect((await fetch(forged)).status).toBe(403);
      const other = await installer('ProviderA');
      expect((await fetch(body.link.replace(id, other))).status).toBe(403);
      const expired = body.link.replace(/expires=\d+/, 'expires=1000');
      expect(await (await fetch(expired)).json()).toEqual({ message: 'the download link is not validly signed' });
    });
  });

  describe('provider B', () => {
    const put = (state: string, eventTime: string, sub = SUB_B) => ({
      eventType: 'PUT',
      applicationId: APP_ID(sub),
      eventTime,
      provisioningState: state,
      billingDetails: { resourceUsageId: 'usage-1' },
      plan: { publisher: 'us', product: 'productbackup', name: 'standard', version: '1.0' },
    });

    it('refuses a wrong or missing secret with 403 and stores nothing', async () => {
      const before = await counts();
      expect(await providerB(put('Accepted', '2026-11-23T05:00:00Z'), 'wrong-secret')).toMatchObject({
        status: 403,
        body: { message: 'the secret does not match' },
      });
      expect((await providerB(put('Accepted', '2026-11-23T05:00:00Z'), null)).status).toBe(403);
      // An empty secret and one a character short are as wrong as any other.
      for (const secret of ['', SECRET.slice(0, -1)])
        expect((await providerB(put('Accepted', '2026-11-23T05:00:00Z'), secret)).status).toBe(403);
      expect(await counts()).toEqual(before);
    });

    it('refuses an unknown event type, an invalid subscription ID and an unknown provisioning state with 400', async () => {
      expect((await providerB({ ...put('Accepted', '2026-11-23T05:00:00Z'), eventType: 'PATCH' })).body.message).toMatch(
        /eventType: must be PUT, DELETE or BIND/,
      );
      expect((await providerB({ ...put('Accepted', '2026-11-23T05:00:00Z'), applicationId: '/subscriptions/nope' })).body.message).toMatch(
        /invalid subscription ID/,
      );
      const odd = await providerB(put('Creating', '2026-11-23T05:00:00Z'));
      expect(odd).toMatchObject({ status: 400, body: { message: 'provisioningState must be one of Accepted, Succeeded, Failed for PUT' } });
      expect(await subscription('ProviderB', SUB_B)).toBeUndefined();
    });

    it('maps PUT and DELETE provisioning states to subscription states, binds on BIND, and revokes the contracts on DELETE', async () => {
      const accepted = await providerB(put('Accepted', '2026-11-23T05:00:00Z'));
      expect(accepted).toEqual({ status: 200, body: undefined, headers: expect.anything() });
      expect(await subscription('ProviderB', SUB_B)).toMatchObject({
        state: 'Pending',
        billing_details: {
          applicationId: APP_ID(SUB_B),
          managedResourceGroupId: `/subscriptions/${SUB_B}/resourceGroups/buyers-rg`,
          resourceIdParts: {
            subscriptionId: SUB_B,
            resourceGroup: 'buyers-rg',
            provider: 'Microsoft.Solutions',
            resourceType: 'applications',
            resourceName: 'platform-app',
          },
          resourceUsageId: 'usage-1',
        },
      });
      // DELETE of a subscription nobody announced is 403.
      const unknown = await providerB({
        ...put('Deleting', '2026-11-23T05:00:00Z', '00000000-1111-4222-8333-444444444444'),
        eventType: 'DELETE',
      });
      expect(unknown).toMatchObject({ status: 403, body: { message: 'subscription 00000000-1111-4222-8333-444444444444 does not exist' } });

      const id = await installer('ProviderB', {});
      const bound = await providerB({
        eventType: 'BIND',
        applicationId: APP_ID(SUB_B),
        eventTime: '2026-11-23T05:01:00Z',
        plan: { product: 'productbackup', name: 'standard' },
        bindingInfo: binding('ProviderB', id),
      });
      expect(bound.status).toBe(200);
      expect(bound.body.link).toContain(`/installers/${id}/archive`);
      expect(dir.provisioned.find((p) => p.subscriptionId === SUB_B)).toMatchObject({
        product: 'productbackup',
        contractName: `ProviderB subscription ${SUB_B} (standard)`,
      });
      expect(await subscription('ProviderB', SUB_B)).toMatchObject({ state: 'Bounded', bounded_installer_id: id });
      const claimId = (await subscription('ProviderB', SUB_B)).claim_id;

      expect((await providerB(put('Succeeded', '2026-11-23T05:02:00Z'))).status).toBe(200);
      expect(await subscription('ProviderB', SUB_B)).toMatchObject({ state: 'Running' });
      expect(dir.flagged).toContain(claimId);
      // A redelivered PUT Accepted changes nothing, and an older one arriving late does not move the state back.
      expect((await providerB(put('Accepted', '2026-11-23T05:00:00Z'))).status).toBe(200);
      expect((await providerB(put('Failed', '2026-11-23T05:01:30Z'))).status).toBe(200);
      expect(await subscription('ProviderB', SUB_B)).toMatchObject({ state: 'Running' });

      const contracts = (await subscription('ProviderB', SUB_B)).contract_ids;
      expect((await providerB({ ...put('Deleting', '2026-11-23T05:03:00Z'), eventType: 'DELETE' })).status).toBe(200);
      expect(await subscription('ProviderB', SUB_B)).toMatchObject({ state: 'Deleting' });
      expect(dir.revoked).toEqual(expect.arrayContaining(contracts));
      expect((await providerB({ ...put('Failed', '2026-11-23T05:04:00Z'), eventType: 'DELETE' })).status).toBe(200);
      expect(await subscription('ProviderB', SUB_B)).toMatchObject({ state: 'DeletionFailed' });
      expect((await providerB({ ...put('Deleted', '2026-11-23T05:05:00Z'), eventType: 'DELETE' })).status).toBe(200);
      expect(await subscription('ProviderB', SUB_B)).toMatchObject({ state: 'Deleted' });
      expect(
        await db.table('audit_events').where({ marketplace: 'ProviderB', subscription_id: SUB_B }).orderBy('id').pluck('status'),
      ).toEqual([
        // The refused PATCH and PUT "Creating" of the test before are audited too (the invalid ID names none).
        'Failed',
        'Failed',
        'Succeeded',
        'Succeeded',
        'Succeeded',
        'Replayed',
        'Ignored',
        'Succeeded',
        'Succeeded',
        'Succeeded',
      ]);
    });

    it('leaves a revoked subscription revoked whatever the marketplace reports later', async () => {
      const sub = '7a7a7a7a-1b1b-4c4c-8d8d-9e9e9e9e9e9e';
      expect((await providerB(put('Accepted', '2026-11-23T05:00:00Z', sub))).status).toBe(200);
      await db.table('subscriptions').where({ marketplace: 'ProviderB', subscription_id: sub }).update({ state: 'Revoked' });
      expect((await providerB(put('Succeeded', '2026-11-23T05:10:00Z', sub))).status).toBe(200);
      expect(await subscription('ProviderB', sub)).toMatchObject({ state: 'Revoked' });
      expect((await db.table('audit_events').where({ subscription_id: sub }).orderBy('id').pluck('description')).at(-1)).toBe(
        'the subscription is revoked; state left as it was',
      );
    });

    it('validates BIND binding info (400)', async () => {
      const res = await providerB({
        eventType: 'BIND',
        applicationId: APP_ID(SUB_B, 'other'),
        eventTime: '2026-11-23T05:01:00Z',
        bindingInfo: { marketplace: 'ProviderB' },
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^invalid binding info: bindingInfo.installerId/);
    });
  });

  describe('provider C', () => {
    it('requires the secret except for the designated test installer, then binds: unknown installer 400, bound 403', async () => {
      const id = await installer('ProviderC', { product: 'productdb' });
      const before = await counts();
      expect((await providerC({ bindingInfo: binding('ProviderC', id) }, null)).status).toBe(403);
      expect((await providerC({ bindingInfo: binding('ProviderC', id) }, 'x'.repeat(32))).status).toBe(403);
      expect(await counts()).toEqual(before);
      expect((await providerC({ bindingInfo: binding('ProviderA', id) })).body.message).toMatch(
        /bindingInfo.marketplace must be ProviderC/,
      );
      expect((await providerC({ eventType: 'x' })).body.message).toBe('bindingInfo is required');
      expect((await providerC({ bindingInfo: binding('ProviderC', 'nope') })).status).toBe(400);
      expect((await providerC({ eventTime: 'yesterday', bindingInfo: binding('ProviderC', id) })).body.message).toMatch(
        /eventTime: must be an RFC3339 date-time/,
      );
      expect((await providerC({ bindingInfo: binding('ProviderC', id, { adminUsername: 'not a name!' }) })).body.message).toMatch(
        /adminUsername: must be a user name/,
      );
      const ok = await providerC({ eventType: 'subscribe', eventTime: '2026-11-23T06:30:00Z', bindingInfo: binding('ProviderC', id) });
      expect(ok.status).toBe(200);
      expect(ok.body.link).toContain(`/installers/${id}/archive`);
      expect(
        (
          await providerC({
            eventType: 'subscribe',
            eventTime: '2026-11-23T06:31:00Z',
            bindingInfo: binding('ProviderC', id, { domainWhiteList: ['other.example.com'] }),
          })
        ).status,
      ).toBe(403);

      await db
        .table('installers')
        .insert({ id: 'providerc-listing-test', marketplace: 'ProviderC', options: JSON.stringify({ product: 'productdb' }) });
      const test = await providerC({ bindingInfo: binding('ProviderC', 'providerc-listing-test') }, null);
      expect(test.status).toBe(200);
    });

    it('treats a redelivery without an event time as the same notification (a digest of its body, password left out)', async () => {
      const id = await installer('ProviderC', { product: 'productdb' });
      const n = { bindingInfo: binding('ProviderC', id) };
      expect((await providerC(n)).status).toBe(200);
      expect((await providerC(n)).status).toBe(200);
      expect((await providerC({ bindingInfo: binding('ProviderC', id, { clusterId: 'another' }) })).status).toBe(403);
      const key = (await db.table('notifications').where({ subscription_id: id }).first()).event_key;
      expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    });
  });

  describe('claimable check', () => {
    it('answers from the claims: 200, 429 with Retry-After during the backoff, 409 claimed, 404 unknown', async () => {
      dir.claims.set('11111111-1111-4111-8111-111111111111', 'open');
      dir.claims.set('22222222-2222-4222-8222-222222222222', 'backoff');
      dir.claims.set('33333333-3333-4333-8333-333333333333', 'claimed');
      const check = (id: string) => fetch(`${base}/marketplaces/standalone-organizations/${id}/claimable`);
      const open = await check('11111111-1111-4111-8111-111111111111');
      expect(open.status).toBe(200);
      expect(await open.json()).toEqual({ isClaimable: true, claimID: '11111111-1111-4111-8111-111111111111' });
      const early = await check('22222222-2222-4222-8222-222222222222');
      expect(early.status).toBe(429);
      expect(early.headers.get('retry-after')).toBe('120');
      expect(await early.json()).toEqual({ message: 'claim 22222222-2222-4222-8222-222222222222 is not claimable yet; retry later' });
      expect((await check('33333333-3333-4333-8333-333333333333')).status).toBe(409);
      expect((await check('44444444-4444-4444-8444-444444444444')).status).toBe(404);
      expect(await (await check('not-a-claim')).json()).toEqual({ message: 'claim not-a-claim does not exist' });
    });
  });
});

describe('claimable check through a central marketplace server', () => {
  let central: http.Server;
  let app: AppUnderTest;
  const asked: string[] = [];
  beforeAll(async () => {
    central = http.createServer((req, res) => {
      asked.push(req.url!);
      const id = /standalone-organizations\/([^/]+)\/claimable$/.exec(req.url!)![1];
      if (id.startsWith('1'))
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ isClaimable: true, claimID: id }));
      else if (id.startsWith('2'))
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' }).end(JSON.stringify({ message: 'wait' }));
      else if (id.startsWith('3')) res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'claimed' }));
      else if (id.startsWith('4')) res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'unknown' }));
      else res.writeHead(502).end('bad gateway');
    });
    await new Promise<void>((r) => central.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(central.address() as AddressInfo).port}/marketplace/api/v1`;
    app = await startAppForTest(createMarketplaceListenerApp({ directory: () => fakeDirectory() }), {
      MARKETPLACE_HTTP_PORT: '0',
      MARKETPLACE_CENTRAL_URL: url,
    });
  });
  afterAll(async () => {
    await app?.stop();
    central?.close();
  });

  it('answers as the central server does, Retry-After included; any other answer is a 500 evaluation error', async () => {
    const check = (id: string) =>
      fetch(`http://127.0.0.1:${app.running.httpPort}/marketplace/api/v1/marketplaces/standalone-organizations/${id}/claimable`);
    const ok = await check('11111111-1111-4111-8111-111111111111');
    expect(await ok.json()).toEqual({ isClaimable: true, claimID: '11111111-1111-4111-8111-111111111111' });
    const wait = await check('22222222-2222-4222-8222-222222222222');
    expect([wait.status, wait.headers.get('retry-after'), await wait.json()]).toEqual([429, '30', { message: 'wait' }]);
    expect((await check('33333333-3333-4333-8333-333333333333')).status).toBe(409);
    expect((await check('44444444-4444-4444-8444-444444444444')).status).toBe(404);
    expect((await check('55555555-5555-4555-8555-555555555555')).status).toBe(500);
    expect(asked[0]).toBe('/marketplace/api/v1/marketplaces/standalone-organizations/11111111-1111-4111-8111-111111111111/claimable');
    // What is not a claim ID never leaves the platform.
    expect((await check('not-a-claim')).status).toBe(404);
    expect(asked).toHaveLength(5);
  });
});
