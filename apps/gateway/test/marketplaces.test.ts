import { InputError, ValidationError } from '@platform/errors';
import { marketplaceListenerV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { registeredRoutesOn } from '../src';
import { adminAndOwner, type FakeBackends, fakeOrgAndCaller, startFakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The marketplace rows at the edge (docs/marketplaces.md) against a stand-in marketplace-listener: the installers a
// site admin prepares (marketplace deployments only), the metered-billing proxy (each provider's pair on its own
// deployment only, site admins only) and the dashboard's subscription rows (billing-enabled, `org` required,
// view_marketplace_usage:site_admin), each checked before the listener is asked and answered in the API's shape.
// What the listener itself does (notifications, metering against the providers' doubles, revocation, audit periods,
// warnings): apps/marketplace-listener/test/notifications.int.test.ts and metering.int.test.ts; a subscription's
// organization, claim and contracts across the apps: deploy/local/test/marketplaces.int.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  buyer: orgsTeamsV1.User.fromPartial({ id: 2, login: 'buyer', active: true }),
  orgowner: orgsTeamsV1.User.fromPartial({ id: 3, login: 'orgowner', active: true }),
};
/** orgowner owns acme. */
const ACME = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme', visibility: 'public' });
const PROXY = '/proxy/metered-billing/marketplaces';
const T = Date.UTC(2026, 10, 23, 7, 0, 0);
const SUB = marketplaceListenerV1.Subscription.fromPartial({
  marketplace: 'ProviderA',
  subscriptionId: 'inst-1',
  subscriberId: 20,
  requesterId: 1,
  boundedInstallerId: 'inst-1',
  state: 'Bounded',
  isRevocable: true,
  noOfBillingEventSent: 31,
  createdMs: T,
  lastUpdatedMs: T + 1000,
  billingDetailsJson: JSON.stringify({ providerAAccountID: '444455556666' }),
});
const unknownSubscription = (id: string) => new InputError(`no subscription ${id}`);

describe('marketplace rows at the edge', () => {
  let backends: FakeBackends;
  const gateways: Record<string, { base: string; close(): void }> = {};

  const call = async (deployment: string, who: string | undefined, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gateways[deployment].base}/api/v1${path}`, {
      method,
      headers: { ...(who && { authorization: `token ${who}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const a = (who: string | undefined, method: string, path: string, body?: unknown) =>
    call('ProviderAMarketplace', who, method, path, body);
  const callsTo = (method: keyof typeof marketplaceListenerV1.MarketplaceListenerServiceService) =>
    backends.marketplaceListener.callsTo('listener', method);

  beforeAll(async () => {
    backends = await startFakeBackends({
      // Site permissions are root's alone; orgowner owns acme, which gives it nothing here.
      ...fakeOrgAndCaller(USERS, ACME, adminAndOwner(USERS.root, USERS.orgowner, ACME)),
      marketplaceListener: {
        listener: {
          // As the listener answers (apps/marketplace-listener/test/notifications.int.test.ts, metering.int.test.ts).
          createInstaller: async ({ marketplace, optionsJson, actor }) => {
            if ((JSON.parse(optionsJson) as { product?: string }).product === 'nosuch')
              throw new InputError('options.product nosuch is not a product of the catalog');
            return {
              id: 'inst-2',
              marketplace,
              optionsJson,
              createdUnix: 1_700_000_000,
              createdBy: actor,
              boundSubscriptionId: '',
              boundUnix: 0,
            };
          },
          listInstallers: async ({ marketplace }) => ({
            installers: [
              {
                id: 'inst-2',
                marketplace: marketplace || 'ProviderA',
                optionsJson: JSON.stringify({ product: 'productdb', tier: 'gold' }),
                createdUnix: 1_700_000_000,
                createdBy: 'root',
                boundSubscriptionId: '',
                boundUnix: 0,
              },
            ],
          }),
          reportUsage: async ({ marketplace, subscriptionId, records }) => {
            if (subscriptionId === 'revoked')
              throw new ValidationError(`subscription ${subscriptionId} is Revoked and can no longer be billed`);
            return {
              marketplace,
              subscriptionId,
              sent: records.length,
              noOfBillingEventSent: 30 + records.length,
              results: records.map((r, i) => ({
                ...r,
                timestampMs: r.timestampMs || T,
                status: 'Success',
                recordId: `rec-${i}`,
                message: '',
              })),
            };
          },
          checkReadiness: async ({ marketplace, subscriptionId }) => {
            if (subscriptionId === 'nosuch') throw unknownSubscription(subscriptionId);
            return subscriptionId === 'down'
              ? { marketplace, ready: false, message: 'UnauthorizedException' }
              : { marketplace, ready: true, message: 'DryRunOperation' };
          },
          listSubscriptions: async () => ({
            subscriptions: [
              { ...SUB, billingDetailsJson: '' },
              { ...SUB, marketplace: 'ProviderB', subscriptionId: 'b-sub', state: 'Pending', billingDetailsJson: '' },
            ],
          }),
          getSubscription: async ({ marketplace, subscriptionId }) => {
            if (subscriptionId !== SUB.subscriptionId) throw unknownSubscription(subscriptionId);
            return { ...SUB, marketplace };
          },
          revokeSubscription: async ({ subscriptionId }) => {
            if (subscriptionId !== SUB.subscriptionId) throw new InputError(`subscription ${subscriptionId} is not revocable`);
            return { ...SUB, state: 'Revoked', isRevocable: false };
          },
          pingSubscription: async ({ marketplace }) => {
            if (marketplace === 'ProviderB') throw new InputError('ProviderB has no metering to ping');
            return { marketplace, ready: true, message: 'DryRunOperation' };
          },
          listAuditReports: async ({ marketplace, subscriptionId }) => ({
            periods: [
              {
                period: '2026-11',
                events: [
                  {
                    marketplace,
                    subscriptionId,
                    status: 'Succeeded',
                    operationType: 'subscribe-success',
                    description: 'bound',
                    dataJson: JSON.stringify({ httpStatus: 200 }),
                    timestampMs: T,
                  },
                ],
              },
            ],
          }),
          getSettingWarnings: async () => ({
            marketplaces: [
              { marketplace: 'ProviderA', warnings: [{ level: 'Warning', msg: 'PROVIDERA_METERING_ENDPOINT http://x is not HTTPS' }] },
              { marketplace: 'ProviderB', warnings: [{ level: 'Error', msg: 'MARKETPLACE_API_SECRET is not set' }] },
              { marketplace: 'ProviderC', warnings: [] },
            ],
          }),
        },
      },
    });
    for (const deployment of ['ProviderAMarketplace', 'ProviderCMarketplace', 'Hosted', 'SelfHostedProduction'])
      gateways[deployment] = await startTestGateway({
        ...backends.env,
        DEPLOYMENT_TYPE: deployment,
        BILLING_ENABLED: 'true',
        PLATFORM_ADMIN_ORG: 'none',
      });
  });
  afterAll(async () => {
    Object.values(gateways).forEach((g) => g.close());
    await backends?.close();
  });
  beforeEach(() => backends.marketplaceListener.reset());

  describe('installers', () => {
    it('lets only site admins prepare and list them, the marketplace checked, the listener’s refusal passed on', async () => {
      expect((await a('buyer', 'POST', '/marketplaces/installers', { marketplace: 'ProviderA' })).status).toBe(403);
      expect((await a(undefined, 'GET', '/marketplaces/installers')).status).toBe(401);
      expect((await a('root', 'POST', '/marketplaces/installers', { marketplace: 'ProviderX' })).status).toBe(400);
      expect(callsTo('createInstaller')).toEqual([]);
      const unknown = await a('root', 'POST', '/marketplaces/installers', { marketplace: 'ProviderA', options: { product: 'nosuch' } });
      expect(unknown).toMatchObject({ status: 400, body: { message: expect.stringMatching(/not a product of the catalog/) } });

      const made = await a('root', 'POST', '/marketplaces/installers', { marketplace: 'ProviderA', options: { product: 'productdb' } });
      expect(made).toEqual({
        status: 201,
        body: {
          id: 'inst-2',
          marketplace: 'ProviderA',
          options: { product: 'productdb' },
          createdBy: 'root',
          createdAt: 1_700_000_000,
          boundSubscriptionId: '',
          boundAt: 0,
        },
      });
      expect(callsTo('createInstaller').at(-1)).toEqual({
        marketplace: 'ProviderA',
        optionsJson: '{"product":"productdb"}',
        actor: 'root',
      });

      const listed = await a('root', 'GET', '/marketplaces/installers?marketplace=ProviderA&unbound=true');
      expect(listed.body).toEqual([
        expect.objectContaining({ id: 'inst-2', options: { product: 'productdb', tier: 'gold' }, createdBy: 'root' }),
      ]);
      expect(callsTo('listInstallers')).toEqual([{ marketplace: 'ProviderA', unboundOnly: true, limit: 1000 }]);
    });

    it('has no installer route and no listener off the marketplace deployments: its paths fall through to the web frontend', async () => {
      for (const deployment of ['Hosted', 'SelfHostedProduction'])
        expect((await call(deployment, 'root', 'POST', '/marketplaces/installers', { marketplace: 'ProviderC' })).status).toBe(404);
      expect(callsTo('createInstaller')).toEqual([]);
      for (const [deployment, method, path] of ['Hosted', 'SelfHostedProduction'].flatMap((d) => [
        [d, 'GET', '/version'],
        [d, 'POST', '/marketplaces/providerc/notification/resource?secret=a-secret-that-would-match'],
        [d, 'GET', '/marketplaces/standalone-organizations/11111111-2222-4333-8444-555555555555/claimable'],
      ])) {
        const res = await fetch(`${gateways[deployment].base}/marketplace/api/v1${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body: method === 'POST' ? '{}' : undefined,
        });
        expect([deployment, method, path, res.status, res.headers.get('content-type')]).toEqual([
          deployment,
          method,
          path,
          200,
          expect.stringMatching(/^text\/html/),
        ]);
      }
    });
  });

  describe('the metered-billing proxy', () => {
    /** Anonymous, a signed-in user, an organization's owner and root, on each row of a provider's pair. */
    const matrix = async (deployment: string, slug: string) => {
      const out: Record<string, number[]> = {};
      for (const [method, path, body] of [
        ['POST', `${PROXY}/${slug}/report-usage`, { subscriptionId: 'none', usage: [{ dimension: 'nodes', quantity: 1 }] }],
        ['GET', `${PROXY}/${slug}/check/readiness`, undefined],
      ] as const)
        out[`${method} ${path}`] = await Promise.all(
          [undefined, 'buyer', 'orgowner', 'root'].map(async (who) => (await call(deployment, who, method, path, body)).status),
        );
      return out;
    };

    it('lets only site admins use each provider’s pair, and only on its own deployment (404 for the other’s)', async () => {
      expect(await matrix('ProviderAMarketplace', 'providera')).toEqual({
        [`POST ${PROXY}/providera/report-usage`]: [401, 403, 403, 200],
        [`GET ${PROXY}/providera/check/readiness`]: [401, 403, 403, 200],
      });
      expect(await matrix('ProviderCMarketplace', 'providerc')).toEqual({
        [`POST ${PROXY}/providerc/report-usage`]: [401, 403, 403, 200],
        [`GET ${PROXY}/providerc/check/readiness`]: [401, 403, 403, 200],
      });
      expect((await a('root', 'POST', `${PROXY}/providerc/report-usage`, { subscriptionId: 'x', usage: [] })).status).toBe(404);
      expect((await a('root', 'GET', `${PROXY}/providerc/check/readiness`)).status).toBe(404);
      expect((await call('ProviderCMarketplace', 'root', 'GET', `${PROXY}/providera/check/readiness`)).status).toBe(404);
      const routes = (type: string) =>
        registeredRoutesOn({ DEPLOYMENT_TYPE: type, BILLING_ENABLED: 'true' })
          .filter((r) => r.path.startsWith(PROXY))
          .map((r) => `${r.method.toUpperCase()} ${r.path}`)
          .sort();
      for (const type of ['Hosted', 'SelfHostedProduction', 'ProviderBMarketplace']) expect(routes(type)).toEqual([]);
      expect(routes('ProviderAMarketplace')).toEqual([`GET ${PROXY}/providera/check/readiness`, `POST ${PROXY}/providera/report-usage`]);
      expect(routes('ProviderCMarketplace')).toEqual([`GET ${PROXY}/providerc/check/readiness`, `POST ${PROXY}/providerc/report-usage`]);
    });

    it('hands the usage on (timestamps in milliseconds, none as 0, the consumer) and answers each record’s outcome', async () => {
      const res = await a('root', 'POST', `${PROXY}/providera/report-usage`, {
        subscriptionId: 'inst-1',
        usage: [
          { dimension: 'nodes', quantity: 5, timestamp: '2026-11-23T08:00:00+01:00' },
          { dimension: 'storage-gb', quantity: 0 },
        ],
      });
      expect(res).toEqual({
        status: 200,
        body: {
          marketplace: 'ProviderA',
          subscriptionId: 'inst-1',
          sent: 2,
          noOfBillingEventSent: 32,
          results: [
            { dimension: 'nodes', quantity: 5, timestamp: new Date(T).toISOString(), status: 'Success', recordId: 'rec-0', message: '' },
            {
              dimension: 'storage-gb',
              quantity: 0,
              timestamp: new Date(T).toISOString(),
              status: 'Success',
              recordId: 'rec-1',
              message: '',
            },
          ],
        },
      });
      await call('ProviderCMarketplace', 'root', 'POST', `${PROXY}/providerc/report-usage`, {
        subscriptionId: 'inst-1',
        consumerId: 'project:buyer',
        usage: [{ dimension: 'requests', quantity: 1200 }],
      });
      expect(callsTo('reportUsage')).toEqual([
        {
          marketplace: 'ProviderA',
          subscriptionId: 'inst-1',
          consumerId: '',
          records: [
            { dimension: 'nodes', quantity: 5, timestampMs: T },
            { dimension: 'storage-gb', quantity: 0, timestampMs: 0 },
          ],
        },
        {
          marketplace: 'ProviderC',
          subscriptionId: 'inst-1',
          consumerId: 'project:buyer',
          records: [{ dimension: 'requests', quantity: 1200, timestampMs: 0 }],
        },
      ]);
    });

    it('refuses a body of the wrong shape with 422 before the listener is asked, and passes the listener’s 422 on', async () => {
      for (const body of [
        { usage: [{ dimension: 'nodes', quantity: 1 }] },
        { subscriptionId: 'inst-1', usage: [{ dimension: 'nodes', quantity: 1.5 }] },
        { subscriptionId: 'inst-1', usage: [{ dimension: 'nodes', quantity: 1, timestamp: 'yesterday' }] },
        { subscriptionId: 'inst-1', usage: 'nodes' },
      ]) {
        const res = await a('root', 'POST', `${PROXY}/providera/report-usage`, body);
        expect({ body, status: res.status, message: typeof res.body?.message }).toEqual({ body, status: 422, message: 'string' });
      }
      expect(callsTo('reportUsage')).toEqual([]);
      const late = await a('root', 'POST', `${PROXY}/providera/report-usage`, {
        subscriptionId: 'revoked',
        usage: [{ dimension: 'nodes', quantity: 1 }],
      });
      expect(late).toMatchObject({ status: 422, body: { message: expect.stringMatching(/Revoked and can no longer be billed/) } });
    });

    it('answers readiness 200 when the provider would take reports, 503 naming its answer when not, 400 for an unknown subscription', async () => {
      expect(await a('root', 'GET', `${PROXY}/providera/check/readiness`)).toEqual({
        status: 200,
        body: { marketplace: 'ProviderA', ready: true, message: 'DryRunOperation' },
      });
      const down = await a('root', 'GET', `${PROXY}/providera/check/readiness?subscriptionId=down`);
      expect(down).toMatchObject({ status: 503, body: { message: 'ProviderA metering is not ready: UnauthorizedException' } });
      expect((await call('ProviderCMarketplace', 'root', 'GET', `${PROXY}/providerc/check/readiness?subscriptionId=nosuch`)).status).toBe(
        400,
      );
      expect(callsTo('checkReadiness')).toEqual([
        { marketplace: 'ProviderA', subscriptionId: '' },
        { marketplace: 'ProviderA', subscriptionId: 'down' },
        { marketplace: 'ProviderC', subscriptionId: 'nosuch' },
      ]);
    });
  });

  describe('the dashboard rows', () => {
    const ROWS: [string, string][] = [
      ['GET', '/dashboard/marketplaces/subscriptions'],
      ['GET', '/dashboard/marketplaces/settings/warnings'],
      ['GET', '/dashboard/marketplaces/ProviderA/inst-1'],
      ['DELETE', '/dashboard/marketplaces/ProviderA/inst-1'],
      ['GET', '/dashboard/marketplaces/ProviderA/inst-1/ping'],
      ['GET', '/dashboard/marketplaces/ProviderA/inst-1/audit-logs'],
    ];

    it('lists the subscriptions without billing details', async () => {
      const list = await a('root', 'GET', '/dashboard/marketplaces/subscriptions?org=acme');
      expect(list.status).toBe(200);
      expect(list.body).toEqual([
        {
          marketplace: 'ProviderA',
          subscriptionId: 'inst-1',
          subscriberId: 20,
          requesterId: 1,
          boundedInstallerId: 'inst-1',
          state: 'Bounded',
          isRevocable: true,
          noOfBillingEventSent: 31,
          createdAt: new Date(T).toISOString(),
          lastUpdatedAt: new Date(T + 1000).toISOString(),
        },
        expect.objectContaining({ marketplace: 'ProviderB', subscriptionId: 'b-sub', state: 'Pending' }),
      ]);
      expect(Object.keys(list.body[1]).filter((k) => k.endsWith('BillingDetails'))).toEqual([]);
    });

    it('shows one subscription with its provider’s billing details; the listener’s 400 passed on', async () => {
      expect(await a('root', 'GET', '/dashboard/marketplaces/ProviderA/inst-1?org=acme')).toMatchObject({
        status: 200,
        body: { marketplace: 'ProviderA', state: 'Bounded', providerABillingDetails: { providerAAccountID: '444455556666' } },
      });
      expect((await a('root', 'GET', '/dashboard/marketplaces/ProviderB/inst-1?org=acme')).body).toHaveProperty('providerBBillingDetails');
      expect((await a('root', 'GET', '/dashboard/marketplaces/ProviderA/unknown?org=acme')).status).toBe(400);
      expect(callsTo('getSubscription').at(-1)).toEqual({ marketplace: 'ProviderA', subscriptionId: 'unknown' });
    });

    it('revokes as the caller, answering the revoked subscription; 400 for one not revocable', async () => {
      expect(await a('root', 'DELETE', '/dashboard/marketplaces/ProviderA/inst-1?org=acme')).toMatchObject({
        status: 200,
        body: { state: 'Revoked', isRevocable: false },
      });
      expect((await a('root', 'DELETE', '/dashboard/marketplaces/ProviderA/other?org=acme')).status).toBe(400);
      expect(callsTo('revokeSubscription')).toEqual([
        { marketplace: 'ProviderA', subscriptionId: 'inst-1', actor: 'root' },
        { marketplace: 'ProviderA', subscriptionId: 'other', actor: 'root' },
      ]);
    });

    it('pings the metering (400 for the second provider), lists the audit log by period and the setting warnings', async () => {
      expect(await a('root', 'GET', '/dashboard/marketplaces/ProviderA/inst-1/ping?org=acme')).toEqual({
        status: 200,
        body: { marketplace: 'ProviderA', ready: true, message: 'DryRunOperation' },
      });
      expect((await a('root', 'GET', '/dashboard/marketplaces/ProviderB/inst-1/ping?org=acme')).status).toBe(400);
      expect(await a('root', 'GET', '/dashboard/marketplaces/ProviderA/inst-1/audit-logs?org=acme')).toEqual({
        status: 200,
        body: {
          auditReports: {
            '2026-11': [
              {
                marketplace: 'ProviderA',
                subscriptionID: 'inst-1',
                status: 'Succeeded',
                operationType: 'subscribe-success',
                description: 'bound',
                data: { httpStatus: 200 },
                timestamp: new Date(T).toISOString(),
              },
            ],
          },
        },
      });
      expect(await a('root', 'GET', '/dashboard/marketplaces/settings/warnings?org=acme')).toEqual({
        status: 200,
        body: {
          warnings: {
            ProviderA: [{ Level: 'Warning', Msg: 'PROVIDERA_METERING_ENDPOINT http://x is not HTTPS' }],
            ProviderB: [{ Level: 'Error', Msg: 'MARKETPLACE_API_SECRET is not set' }],
            ProviderC: [],
          },
        },
      });
    });

    it('is for site admins: 401 without a token, 403 for others (an organization’s owner too), 400 without org', async () => {
      for (const [method, path] of ROWS) {
        expect([method, path, (await a(undefined, method, `${path}?org=acme`)).status]).toEqual([method, path, 401]);
        expect([method, path, (await a('buyer', method, `${path}?org=acme`)).status]).toEqual([method, path, 403]);
        expect([method, path, (await a('orgowner', method, `${path}?org=acme`)).status]).toEqual([method, path, 403]);
        expect(await a('root', method, path)).toMatchObject({ status: 400, body: { message: expect.stringMatching(/org/) } });
      }
      expect(callsTo('revokeSubscription')).toEqual([]);
    });
  });
});
