import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { registeredRoutesOn } from '@platform/app-gateway';
import { startAwsMeteringDouble, startServiceControlDouble, type AwsMeteringDouble, type ServiceControlDouble } from '@platform/testing';
import { bootTestPlatform, type TestPlatform } from './harness';
import { marketplaceKit } from './marketplace';

/**
 * The metered-billing proxy and the /dashboard/marketplaces rows through the gateway, on the
 * first and third providers' marketplace deployments, against local doubles of AWS Marketplace Metering and
 * Google Service Control that speak their wire formats (docs/marketplaces.md). Also the proxy's own small
 * authorization matrix: the main matrix boots Hosted, where these pairs do not exist.
 */

const PROXY = '/proxy/metered-billing/marketplaces';
const SECRET = 'a-marketplace-api-secret-for-e2e';
const nowSec = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();

/** Anonymous is 401; signed-in users who are not site admins (an org owner among them) are 403; root gets through. */
async function proxyMatrix(t: TestPlatform, slug: string) {
  const outcomes: Record<string, number[]> = {};
  for (const [method, route, body] of [
    ['POST', `${PROXY}/${slug}/report-usage`, { subscriptionId: 'none', usage: [{ dimension: 'nodes', quantity: 1 }] }],
    ['GET', `${PROXY}/${slug}/check/readiness`, undefined],
  ] as const) {
    outcomes[`${method} ${route}`] = [];
    for (const who of [undefined, 'buyer', 'orgowner', 'root'])
      outcomes[`${method} ${route}`].push((await t.api(who, method, route, body)).status);
  }
  return outcomes;
}

describe('metered billing and the dashboard on ProviderAMarketplace (AWS Marketplace Metering double)', () => {
  let t: TestPlatform;
  let aws: AwsMeteringDouble;
  const kit = marketplaceKit(() => t);
  let sub: string;

  beforeAll(async () => {
    aws = await startAwsMeteringDouble();
    t = await bootTestPlatform({
      DEPLOYMENT_TYPE: 'ProviderAMarketplace',
      BILLING_ENABLED: 'true',
      NATS_URL: '',
      TRUST_PROXY: 'loopback',
      PROVIDERA_ALLOWED_CIDRS: '+198.51.100.0/24',
      MARKETPLACE_CLAIM_BACKOFF_SECONDS: '0',
      PROVIDERA_METERING_ENDPOINT: aws.url,
      PROVIDERA_PRODUCT_CODE: 'prod-e2e-code',
      PROVIDERA_ACCESS_KEY_ID: 'AKIDE2EE2EE2E',
      PROVIDERA_SECRET_ACCESS_KEY: 'e2e-secret-access-key',
      PROVIDERA_READINESS_DIMENSION: 'nodes',
      METERING_RETRY_BASE_MS: '5',
    });
    await t.signUp('buyer');
    await t.signUp('orgowner');
    expect((await t.api('orgowner', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
    sub = await kit.installer('ProviderA', { product: 'productdb' });
    const bound = await kit.post(
      '/marketplaces/providera/notification/resource',
      { eventType: 'subscribe-success', bindingInfo: kit.binding('ProviderA', sub, { providerAAccountID: '444455556666' }) },
      { 'x-forwarded-for': '198.51.100.9' },
    );
    expect(bound.status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await aws?.close();
  });

  it('lets only site admins use the proxy (401 anonymous, 403 for everyone else); the third provider’s pair is 404 here', async () => {
    const m = await proxyMatrix(t, 'providera');
    expect(m).toEqual({
      [`POST ${PROXY}/providera/report-usage`]: [401, 403, 403, 422],
      [`GET ${PROXY}/providera/check/readiness`]: [401, 403, 403, 200],
    });
    expect((await t.api('root', 'POST', `${PROXY}/providerc/report-usage`, { subscriptionId: sub, usage: [] })).status).toBe(404);
    expect((await t.api('root', 'GET', `${PROXY}/providerc/check/readiness`)).status).toBe(404);
  });

  it('reports usage through BatchMeterUsage in batches of 25 and counts it into noOfBillingEventSent', async () => {
    aws.batches.length = 0;
    const usage = Array.from({ length: 30 }, (_, i) => ({
      dimension: i % 2 ? 'nodes' : 'storage-gb',
      quantity: i,
      timestamp: new Date(Date.now() - i * 60_000).toISOString(),
    }));
    const res = await t.api('root', 'POST', `${PROXY}/providera/report-usage`, { subscriptionId: sub, usage });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ marketplace: 'ProviderA', subscriptionId: sub, sent: 30, noOfBillingEventSent: 30 });
    expect(res.body.results[0]).toEqual({
      dimension: 'storage-gb',
      quantity: 0,
      timestamp: expect.any(String),
      status: 'Success',
      recordId: expect.any(String),
      message: '',
    });
    expect(aws.batches.map((b) => [b.ProductCode, b.UsageRecords.length])).toEqual([
      ['prod-e2e-code', 25],
      ['prod-e2e-code', 5],
    ]);
    expect(aws.batches[0].UsageRecords.every((r) => r.CustomerAWSAccountId === '444455556666')).toBe(true);
    // A throttled provider is retried with backoff.
    aws.failNext(2);
    const retried = await t.api('root', 'POST', `${PROXY}/providera/report-usage`, {
      subscriptionId: sub,
      usage: [{ dimension: 'nodes', quantity: 5, timestamp: nowSec() }],
    });
    expect(retried.body).toMatchObject({ sent: 1, noOfBillingEventSent: 31 });
    const listed = await t.api('root', 'GET', '/dashboard/marketplaces/subscriptions?org=acme');
    expect(listed.body.find((s: { subscriptionId: string }) => s.subscriptionId === sub)).toMatchObject({ noOfBillingEventSent: 31 });
  });

  it('refuses invalid usage with 422 and sends nothing', async () => {
    aws.batches.length = 0;
    const bad: [unknown, RegExp][] = [
      [{ subscriptionId: sub, usage: [] }, /at least one record/],
      [{ subscriptionId: sub, usage: [{ dimension: 'nodes', quantity: 1.5 }] }, /quantity/],
      [{ subscriptionId: sub, usage: [{ dimension: 'nodes', quantity: 1, timestamp: '2020-01-01T00:00:00Z' }] }, /last 24 hours/],
      [{ subscriptionId: sub, usage: [{ dimension: 'bad dimension', quantity: 1 }] }, /dimension/],
      [{ subscriptionId: 'no-such', usage: [{ dimension: 'nodes', quantity: 1 }] }, /no subscription/],
      [{ usage: [{ dimension: 'nodes', quantity: 1 }] }, /subscriptionId/],
    ];
    for (const [body, message] of bad) {
      const res = await t.api('root', 'POST', `${PROXY}/providera/report-usage`, body);
      expect([res.status, res.body.message]).toEqual([422, expect.stringMatching(message)]);
    }
    expect(aws.batches).toEqual([]);
  });

  it('checks readiness with a MeterUsage dry run: 200 when DryRunOperation, 503 otherwise', async () => {
    expect(await t.api('root', 'GET', `${PROXY}/providera/check/readiness`)).toMatchObject({
      status: 200,
      body: { marketplace: 'ProviderA', ready: true },
    });
    expect(aws.meterUsage.at(-1)).toMatchObject({ ProductCode: 'prod-e2e-code', DryRun: true, UsageDimension: 'nodes' });
    aws.dryRun = 'UnauthorizedException';
    const down = await t.api('root', 'GET', `${PROXY}/providera/check/readiness`);
    aws.dryRun = 'DryRunOperation';
    expect(down).toMatchObject({ status: 503, body: { message: expect.stringMatching(/not ready.*UnauthorizedException/) } });
  });

  it('shows one subscription with its billing details, pings its metering, and lists its audit log by period', async () => {
    const one = await t.api('root', 'GET', `/dashboard/marketplaces/ProviderA/${sub}?org=acme`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      marketplace: 'ProviderA',
      subscriptionId: sub,
      boundedInstallerId: sub,
      state: 'Bounded',
      isRevocable: true,
      providerABillingDetails: { providerAAccountID: '444455556666' },
    });
    expect((await t.api('root', 'GET', `/dashboard/marketplaces/ProviderX/${sub}?org=acme`)).status).toBe(400);
    expect((await t.api('root', 'GET', `/dashboard/marketplaces/ProviderA/unknown?org=acme`)).status).toBe(400);

    expect(await t.api('root', 'GET', `/dashboard/marketplaces/ProviderA/${sub}/ping?org=acme`)).toMatchObject({
      status: 200,
      body: { ready: true },
    });
    aws.dryRun = 'InvalidProductCodeException';
    const failing = await t.api('root', 'GET', `/dashboard/marketplaces/ProviderA/${sub}/ping?org=acme`);
    aws.dryRun = 'DryRunOperation';
    expect(failing).toMatchObject({ status: 400, body: { message: expect.stringMatching(/InvalidProductCode/) } });

    const logs = await t.api('root', 'GET', `/dashboard/marketplaces/ProviderA/${sub}/audit-logs?org=acme`);
    expect(logs.status).toBe(200);
    const period = new Date().toISOString().slice(0, 7);
    expect(Object.keys(logs.body.auditReports)).toEqual([period]);
    expect(logs.body.auditReports[period][0]).toMatchObject({
      marketplace: 'ProviderA',
      subscriptionID: sub,
      status: 'Succeeded',
      operationType: 'subscribe-success',
      data: { httpStatus: 200 },
    });
    expect(JSON.stringify(logs.body)).not.toContain('buyer-Secret-pw-1');
  });

  it('lists setting warnings per marketplace', async () => {
    const res = await t.api('root', 'GET', '/dashboard/marketplaces/settings/warnings?org=acme');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.warnings)).toEqual(['ProviderA', 'ProviderB', 'ProviderC']);
    expect(res.body.warnings.ProviderA).toContainEqual({
      Level: 'Warning',
      Msg: expect.stringMatching(/PROVIDERA_METERING_ENDPOINT .* is not HTTPS/),
    });
    expect(res.body.warnings.ProviderB).toContainEqual({ Level: 'Error', Msg: expect.stringMatching(/MARKETPLACE_API_SECRET is not set/) });
    expect(res.body.warnings.ProviderC).toContainEqual({ Level: 'Error', Msg: expect.stringMatching(/PROVIDERC_SERVICE_NAME is not set/) });
  });

  it('revokes a subscription: state Revoked, its contract revoked, no more billing; a second revoke is 400', async () => {
    const before = await kit.subscription('ProviderA', sub);
    const res = await t.api('root', 'DELETE', `/dashboard/marketplaces/ProviderA/${sub}?org=acme`);
    expect(res).toMatchObject({ status: 200, body: { state: 'Revoked', isRevocable: false } });
    const contracts = await kit.contractsOf(before.subscriber_id);
    expect(contracts.map((c) => c.revoked)).toEqual([true]);
    expect((await t.api('root', 'DELETE', `/dashboard/marketplaces/ProviderA/${sub}?org=acme`)).status).toBe(400);
    const late = await t.api('root', 'POST', `${PROXY}/providera/report-usage`, {
      subscriptionId: sub,
      usage: [{ dimension: 'nodes', quantity: 1 }],
    });
    expect([late.status, late.body.message]).toEqual([422, expect.stringMatching(/Revoked and can no longer be billed/)]);
    const logs = await t.api('root', 'GET', `/dashboard/marketplaces/ProviderA/${sub}/audit-logs?org=acme`);
    const entries = Object.values(logs.body.auditReports).flat() as { operationType: string; description: string }[];
    expect(entries.at(-1)).toMatchObject({ operationType: 'REVOKE', description: expect.stringMatching(/revoked by site admin root/) });
  });
});

describe('metered billing and the dashboard on ProviderCMarketplace (Google Service Control double)', () => {
  let t: TestPlatform;
  let gsc: ServiceControlDouble;
  const kit = marketplaceKit(() => t);
  let sub: string;
  const B_SUB = '0b6c9a2e-1d4f-4e8a-9c3b-7f5e2d1a0c9b';

  beforeAll(async () => {
    gsc = await startServiceControlDouble();
    t = await bootTestPlatform({
      DEPLOYMENT_TYPE: 'ProviderCMarketplace',
      BILLING_ENABLED: 'true',
      NATS_URL: '',
      MARKETPLACE_API_SECRET: SECRET,
      MARKETPLACE_CLAIM_BACKOFF_SECONDS: '0',
      PROVIDERC_SERVICE_CONTROL_ENDPOINT: gsc.url,
      PROVIDERC_SERVICE_NAME: 'platform.endpoints.e2e-project.cloud.goog',
      PROVIDERC_SERVICE_ACCOUNT_KEY_FILE: gsc.keyFile(mkdtempSync(path.join(tmpdir(), 'gsc-e2e-'))),
      METERING_RETRY_BASE_MS: '5',
    });
    await t.signUp('buyer');
    await t.signUp('orgowner');
    expect((await t.api('orgowner', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
    sub = await kit.installer('ProviderC', { product: 'productdb' });
    const bound = await kit.post(`/marketplaces/providerc/notification/resource?secret=${SECRET}`, {
      eventType: 'ENTITLEMENT_ACTIVE',
      bindingInfo: kit.binding('ProviderC', sub, { options: { consumerId: 'project:buyer-e2e' } }),
    });
    expect(bound.status).toBe(200);
    // A second-provider subscription too (one listener serves every provider), for the ping's 400.
    const put = await kit.post(`/marketplaces/providerb/notification/resource?secret=${SECRET}`, {
      eventType: 'PUT',
      eventTime: '2026-11-23T06:00:00Z',
      provisioningState: 'Accepted',
      applicationId: `/subscriptions/${B_SUB}/resourceGroups/rg/providers/Microsoft.Solutions/applications/app`,
    });
    expect(put.status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await gsc?.close();
  });

  it('lets only site admins use the proxy (401 anonymous, 403 for everyone else); the first provider’s pair is 404 here', async () => {
    expect(await proxyMatrix(t, 'providerc')).toEqual({
      [`POST ${PROXY}/providerc/report-usage`]: [401, 403, 403, 422],
      // No subscription and no PROVIDERC_CONSUMER_ID: nothing to check, so not ready.
      [`GET ${PROXY}/providerc/check/readiness`]: [401, 403, 403, 503],
    });
    expect((await t.api('root', 'GET', `${PROXY}/providera/check/readiness`)).status).toBe(404);
  });

  it('reports usage through services.report under the subscription’s consumer, and counts it', async () => {
    gsc.failNext(1);
    const res = await t.api('root', 'POST', `${PROXY}/providerc/report-usage`, {
      subscriptionId: sub,
      usage: [
        { dimension: 'requests', quantity: 1200, timestamp: nowSec() },
        { dimension: 'storage_gb', quantity: 3 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ marketplace: 'ProviderC', sent: 2, noOfBillingEventSent: 2 });
    expect(gsc.reports).toHaveLength(1);
    expect(gsc.reports[0].service).toBe('platform.endpoints.e2e-project.cloud.goog');
    expect(
      gsc.reports[0].operations.map((o) => [
        o.consumerId,
        o.metricValueSets[0].metricName,
        o.metricValueSets[0].metricValues[0].int64Value,
      ]),
    ).toEqual([
      ['project:buyer-e2e', 'platform.endpoints.e2e-project.cloud.goog/requests', '1200'],
      ['project:buyer-e2e', 'platform.endpoints.e2e-project.cloud.goog/storage_gb', '3'],
    ]);
    expect(res.body.results.map((r: { recordId: string }) => r.recordId)).toEqual(gsc.reports[0].operations.map((o) => o.operationId));
    const bad = await t.api('root', 'POST', `${PROXY}/providerc/report-usage`, {
      subscriptionId: sub,
      consumerId: 'not a consumer',
      usage: [{ dimension: 'requests', quantity: 1 }],
    });
    expect([bad.status, bad.body.message]).toEqual([422, expect.stringMatching(/consumerId/)]);
  });

  it('checks readiness with services.check for a subscription; the dashboard ping is 400 for the second provider', async () => {
    expect(await t.api('root', 'GET', `${PROXY}/providerc/check/readiness?subscriptionId=${sub}`)).toMatchObject({
      status: 200,
      body: { ready: true },
    });
    expect(gsc.checks.at(-1)!.operation.consumerId).toBe('project:buyer-e2e');
    expect((await t.api('root', 'GET', `${PROXY}/providerc/check/readiness?subscriptionId=nosuch`)).status).toBe(400);
    expect((await t.api('root', 'GET', `/dashboard/marketplaces/ProviderC/${sub}/ping?org=acme`)).status).toBe(200);
    gsc.blockedConsumers.add('project:buyer-e2e');
    const blocked = await t.api('root', 'GET', `/dashboard/marketplaces/ProviderC/${sub}/ping?org=acme`);
    gsc.blockedConsumers.clear();
    expect(blocked).toMatchObject({ status: 400, body: { message: expect.stringMatching(/PROJECT_DELETED/) } });
    expect((await t.api('root', 'GET', `/dashboard/marketplaces/ProviderB/${B_SUB}/ping?org=acme`)).status).toBe(400);
  });

  it('lists subscriptions most recently updated first, without billing details; 401/403/400 as the spec says', async () => {
    const list = await t.api('root', 'GET', '/dashboard/marketplaces/subscriptions?org=acme');
    expect(list.status).toBe(200);
    expect(list.body.map((s: { subscriptionId: string }) => s.subscriptionId)).toEqual([sub, B_SUB]);
    expect(list.body[1]).toMatchObject({ marketplace: 'ProviderB', state: 'Pending', boundedInstallerId: '', isRevocable: true });
    expect(Object.keys(list.body[0]).filter((k) => k.endsWith('BillingDetails'))).toEqual([]);
    const detail = await t.api('root', 'GET', `/dashboard/marketplaces/ProviderB/${B_SUB}?org=acme`);
    expect(detail.body.providerBBillingDetails).toMatchObject({ managedResourceGroupId: `/subscriptions/${B_SUB}/resourceGroups/rg` });
    expect((await t.api(undefined, 'GET', '/dashboard/marketplaces/subscriptions?org=acme')).status).toBe(401);
    expect((await t.api('orgowner', 'GET', '/dashboard/marketplaces/subscriptions?org=acme')).status).toBe(403);
    expect((await t.api('root', 'GET', '/dashboard/marketplaces/subscriptions')).status).toBe(400);
  });
});

describe('the metered-billing proxy elsewhere', () => {
  it('is registered only on its own marketplace deployment type', () => {
    const proxyRoutes = (type: string) =>
      registeredRoutesOn({ DEPLOYMENT_TYPE: type, BILLING_ENABLED: 'true' })
        .filter((r) => r.path.startsWith(PROXY))
        .map((r) => `${r.method.toUpperCase()} ${r.path}`)
        .sort();
    for (const type of ['Hosted', 'SelfHostedProduction', 'ProviderBMarketplace']) expect(proxyRoutes(type)).toEqual([]);
    expect(proxyRoutes('ProviderAMarketplace')).toEqual([`GET ${PROXY}/providera/check/readiness`, `POST ${PROXY}/providera/report-usage`]);
    expect(proxyRoutes('ProviderCMarketplace')).toEqual([`GET ${PROXY}/providerc/check/readiness`, `POST ${PROXY}/providerc/report-usage`]);
  });
});
