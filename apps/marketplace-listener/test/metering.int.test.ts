import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Database } from '@platform/db';
import { marketplaceListenerV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { startAwsMeteringDouble, startServiceControlDouble, type AwsMeteringDouble, type ServiceControlDouble } from '@platform/testing';
import { readFileSync } from 'node:fs';
import { createMarketplaceListenerApp } from '../src/app';
import { providerCMetering } from '../src/metering/providerc';
import { fakeDirectory, type FakeDirectory } from './fake-directory';

// The metered-billing proxy and the dashboard's marketplace RPCs against local doubles of AWS
// Marketplace Metering and Google Service Control: validation, batching, retries, counting, readiness, revoke,
// audit periods and setting warnings.

describe('metered billing and the dashboard rows', () => {
  let dir: FakeDirectory;
  let aws: AwsMeteringDouble;
  let gsc: ServiceControlDouble;
  let app: AppUnderTest;
  let db: Database;
  let grpc: PromiseClient<typeof marketplaceListenerV1.MarketplaceListenerServiceService>;

  beforeAll(async () => {
    dir = fakeDirectory();
    aws = await startAwsMeteringDouble();
    gsc = await startServiceControlDouble();
    app = await startAppForTest(createMarketplaceListenerApp({ directory: () => dir }), {
      MARKETPLACE_HTTP_PORT: '0',
      MARKETPLACE_API_SECRET: 'a-marketplace-api-secret-of-ours',
      PROVIDERA_METERING_ENDPOINT: aws.url,
      PROVIDERA_PRODUCT_CODE: 'prod-abc123',
      PROVIDERA_ACCESS_KEY_ID: 'AKIDTESTTESTTEST',
      PROVIDERA_SECRET_ACCESS_KEY: 'test-secret-access-key',
      PROVIDERA_READINESS_DIMENSION: 'nodes',
      PROVIDERC_SERVICE_CONTROL_ENDPOINT: gsc.url,
      PROVIDERC_SERVICE_NAME: 'platform.endpoints.test-project.cloud.goog',
      PROVIDERC_SERVICE_ACCOUNT_KEY_FILE: gsc.keyFile(mkdtempSync(path.join(tmpdir(), 'gsc-'))),
      METERING_RETRY_BASE_MS: '5',
    });
    db = app.running.ctx.db!;
    grpc = createClient(marketplaceListenerV1.MarketplaceListenerServiceService, app.address, { name: 'marketplace-listener' });
    await db
      .table('subscriptions')
      .insert([
        row('ProviderA', 'sub-a', { providerAAccountID: '111122223333' }, [501, 502]),
        row('ProviderA', 'sub-a-gone', { providerAAccountID: '111122223333' }, [], 'Deleted'),
        row('ProviderA', 'sub-a-revoked', { providerAAccountID: '111122223333' }, [], 'Revoked'),
        row('ProviderA', 'sub-a-noaccount', {}, []),
        row('ProviderB', 'sub-b', { managedResourceGroupId: '/subscriptions/x/resourceGroups/y' }, [503]),
        row('ProviderC', 'sub-c', { consumerId: 'project:buyer-project' }, []),
      ]);
  });
  afterAll(async () => {
    grpc?.close();
    await app?.stop();
    await aws?.close();
    await gsc?.close();
  });

  function row(marketplace: string, id: string, details: object, contracts: number[], state = 'Bounded') {
    return {
      marketplace,
      subscription_id: id,
      state,
      subscriber_id: 7,
      requester_id: 1,
      bounded_installer_id: `inst-${id}`,
      billing_details: JSON.stringify(details),
      contract_ids: JSON.stringify(contracts),
    };
  }
  const now = () => Math.floor(Date.now() / 1000) * 1000;
  const records = (n: number, dimension = 'nodes') =>
    Array.from({ length: n }, (_, i) => ({ dimension, quantity: i + 1, timestampMs: now() - i * 1000 }));
  const report = (
    marketplace: string,
    subscriptionId: string,
    recs: { dimension: string; quantity: number; timestampMs: number }[],
    consumerId = '',
  ) => grpc.reportUsage({ marketplace, subscriptionId, records: recs, consumerId });
  const billed = async (m: string, id: string) =>
    Number((await db.table('subscriptions').where({ marketplace: m, subscription_id: id }).first()).no_of_billing_event_sent);

  describe('first provider (AWS Marketplace Metering)', () => {
    it('sends 60 records as BatchMeterUsage batches of at most 25, signed, naming the buyer account, and counts them', async () => {
      aws.batches.length = 0;
      // The records' times are read once: a second boundary between two now() calls made this test flaky.
      const sent = records(60);
      const out = await report('ProviderA', 'sub-a', sent);
      expect(aws.batches.map((b) => b.UsageRecords.length)).toEqual([25, 25, 10]);
      expect(aws.batches[0]).toMatchObject({ ProductCode: 'prod-abc123' });
      expect(aws.batches[0].UsageRecords[0]).toEqual({
        CustomerAWSAccountId: '111122223333',
        Dimension: 'nodes',
        Quantity: 1,
        Timestamp: sent[0].timestampMs / 1000,
      });
      expect(aws.authorizations.at(-1)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTESTTESTTEST\/\d{8}\/us-east-1\/aws-marketplace\//);
      expect(out.sent).toBe(60);
      expect(out.results.every((r) => r.status === 'Success' && r.recordId.length > 0)).toBe(true);
      expect(Number(out.noOfBillingEventSent)).toBe(60);
      expect(await billed('ProviderA', 'sub-a')).toBe(60);
    });

    it('retries server errors and unprocessed records with backoff, then counts what was accepted', async () => {
      aws.batches.length = 0;
      aws.failNext(2);
      aws.unprocessNext(1);
      const before = await billed('ProviderA', 'sub-a');
      const out = await report('ProviderA', 'sub-a', records(3, 'storage-gb'));
      expect(out.sent).toBe(3);
      // The first accepted batch left one record unprocessed: it was sent again on its own.
      expect(aws.batches.map((b) => b.UsageRecords.length)).toEqual([3, 1]);
      expect(await billed('ProviderA', 'sub-a')).toBe(before + 3);
    });

    it('answers each record’s outcome and counts only successes; a provider that stays down fails the records', async () => {
      aws.unsubscribed.add('111122223333');
      const refused = await report('ProviderA', 'sub-a', records(2, 'seats'));
      aws.unsubscribed.clear();
      expect(refused.results.map((r) => r.status)).toEqual(['CustomerNotSubscribed', 'CustomerNotSubscribed']);
      expect(refused.sent).toBe(0);
      const before = await billed('ProviderA', 'sub-a');
      aws.failNext(100);
      const down = await report('ProviderA', 'sub-a', records(1, 'seats'));
      aws.failNext(0);
      expect(down.results[0]).toMatchObject({ status: 'Failed', message: expect.stringMatching(/InternalServiceError|try again/) });
      expect(await billed('ProviderA', 'sub-a')).toBe(before);
    });

    it('refuses invalid reports with 422, sending nothing', async () => {
      aws.batches.length = 0;
      const cases: [string, Parameters<typeof report>[2], RegExp][] = [
        ['sub-a', [], /usage: must hold at least one record/],
        ['sub-a', records(1001), /at most 1000 records/],
        ['sub-a', [{ dimension: 'no spaces', quantity: 1, timestampMs: now() }], /usage\[0\]\.dimension/],
        ['sub-a', [{ dimension: 'nodes', quantity: -1, timestampMs: now() }], /usage\[0\]\.quantity/],
        ['sub-a', [{ dimension: 'nodes', quantity: 2 ** 31, timestampMs: now() }], /usage\[0\]\.quantity/],
        ['sub-a', [{ dimension: 'nodes', quantity: 1, timestampMs: now() - 25 * 3600_000 }], /within the last 24 hours/],
        ['sub-a', [{ dimension: 'nodes', quantity: 1, timestampMs: now() + 3600_000 }], /in the future/],
        ['sub-a', [records(1)[0], records(1)[0]], /repeats the dimension and timestamp/],
        ['nosuch', records(1), /no subscription nosuch/],
        ['sub-a-gone', records(1), /is Deleted and can no longer be billed/],
        ['sub-a-revoked', records(1), /is Revoked and can no longer be billed/],
        ['sub-a-noaccount', records(1), /no providerAAccountID/],
      ];
      for (const [sub, recs, message] of cases) {
        await expect(report('ProviderA', sub, recs)).rejects.toMatchObject({ kind: 'validation', message: expect.stringMatching(message) });
      }
      expect(aws.batches).toEqual([]);
    });

    it('checks readiness with a MeterUsage dry run: DryRunOperation is ready, anything else is not', async () => {
      expect(await grpc.checkReadiness({ marketplace: 'ProviderA', subscriptionId: '' })).toMatchObject({ ready: true });
      expect(aws.meterUsage.at(-1)).toMatchObject({ ProductCode: 'prod-abc123', UsageDimension: 'nodes', UsageQuantity: 0, DryRun: true });
      aws.dryRun = 'UnauthorizedException';
      const no = await grpc.checkReadiness({ marketplace: 'ProviderA', subscriptionId: '' });
      aws.dryRun = 'DryRunOperation';
      expect(no).toMatchObject({ ready: false, message: expect.stringMatching(/UnauthorizedException/) });
    });
  });

  describe('third provider (Google Service Control)', () => {
    it('reports one operation per record under the subscription’s consumer, with a service-account token', async () => {
      gsc.reports.length = 0;
      const sent = records(3, 'requests');
      const out = await report('ProviderC', 'sub-c', sent);
      expect(out.sent).toBe(3);
      expect(gsc.tokensIssued).toBe(1);
      expect(gsc.reports).toHaveLength(1);
      expect(gsc.reports[0].service).toBe('platform.endpoints.test-project.cloud.goog');
      expect(gsc.reports[0].operations[0]).toMatchObject({
        consumerId: 'project:buyer-project',
        metricValueSets: [
          {
            metricName: 'platform.endpoints.test-project.cloud.goog/requests',
            metricValues: [{ int64Value: '1', startTime: new Date(sent[0].timestampMs).toISOString() }],
          },
        ],
      });
      expect(out.results.map((r) => r.recordId)).toEqual(gsc.reports[0].operations.map((o) => o.operationId));
      expect(await billed('ProviderC', 'sub-c')).toBe(3);
    });

    it('batches 250 records into reports of 100, retries 503s, and fails only the operations Service Control names', async () => {
      gsc.reports.length = 0;
      gsc.failNext(2);
      gsc.rejectMetrics.add('platform.endpoints.test-project.cloud.goog/unknown-metric');
      const out = await report(
        'ProviderC',
        'sub-c',
        [...records(249, 'requests'), { dimension: 'unknown-metric', quantity: 1, timestampMs: now() }],
        'project:other',
      );
      gsc.rejectMetrics.clear();
      expect(gsc.reports.map((r) => r.operations.length)).toEqual([100, 100, 50]);
      expect(gsc.reports[0].operations[0].consumerId).toBe('project:other');
      expect(out.sent).toBe(249);
      expect(out.results.at(-1)).toMatchObject({ status: 'Failed', message: 'metric is not defined for the service' });
      expect(gsc.tokensIssued).toBe(1);
    });

    it('checks readiness with services.check for the subscription’s consumer', async () => {
      expect(await grpc.checkReadiness({ marketplace: 'ProviderC', subscriptionId: 'sub-c' })).toMatchObject({ ready: true });
      expect(gsc.checks.at(-1)!.operation).toMatchObject({ consumerId: 'project:buyer-project' });
      // No subscription and no PROVIDERC_CONSUMER_ID: nothing to check.
      expect(await grpc.checkReadiness({ marketplace: 'ProviderC', subscriptionId: '' })).toMatchObject({ ready: false });
      gsc.blockedConsumers.add('project:buyer-project');
      const blocked = await grpc.checkReadiness({ marketplace: 'ProviderC', subscriptionId: 'sub-c' });
      gsc.blockedConsumers.clear();
      expect(blocked).toMatchObject({ ready: false, message: expect.stringMatching(/PROJECT_DELETED/) });
    });

    it('takes the key as JSON from the environment too, and never repeats a bad key in its warnings', async () => {
      const base = {
        endpoint: gsc.url,
        serviceName: 'svc.example',
        defaultConsumerId: 'project:p',
        retry: { attempts: 1, baseDelayMs: 1 },
        timeoutMs: 5000,
      };
      const fromEnv = providerCMetering({ ...base, key: readFileSync(gsc.keyFile(mkdtempSync(path.join(tmpdir(), 'gsc-'))), 'utf8') });
      expect(await fromEnv.readiness()).toMatchObject({ ready: true });
      const bad = providerCMetering({ ...base, key: '{"private_key": "-----BEGIN PRIVATE KEY-----secret' });
      const msgs = bad.warnings().map((w) => w.Msg);
      expect(msgs).toContain('PROVIDERC_SERVICE_ACCOUNT_KEY: not valid JSON');
      expect(JSON.stringify(msgs)).not.toContain('secret');
      expect(await bad.readiness()).toMatchObject({ ready: false, message: expect.stringMatching(/not valid JSON/) });
    });

    it('has no metering for the second provider', async () => {
      await expect(report('ProviderB', 'sub-b', records(1))).rejects.toMatchObject({ kind: 'not-found' });
    });
  });

  describe('dashboard rows', () => {
    it('lists subscriptions most recently updated first, without billing details', async () => {
      await db
        .table('subscriptions')
        .where({ subscription_id: 'sub-b' })
        .update({ last_updated_at: new Date(Date.now() + 60_000) });
      const list = await grpc.listSubscriptions({ marketplace: '' });
      expect(list.subscriptions[0].subscriptionId).toBe('sub-b');
      const times = list.subscriptions.map((s) => Number(s.lastUpdatedMs));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(list.subscriptions.every((s) => s.billingDetailsJson === '')).toBe(true);
      const one = await grpc.getSubscription({ marketplace: 'ProviderB', subscriptionId: 'sub-b' });
      expect(JSON.parse(one.billingDetailsJson)).toEqual({ managedResourceGroupId: '/subscriptions/x/resourceGroups/y' });
    });

    it('answers 400 for an unknown subscription or marketplace', async () => {
      await expect(grpc.getSubscription({ marketplace: 'ProviderB', subscriptionId: 'nosuch' })).rejects.toMatchObject({ kind: 'input' });
      await expect(grpc.getSubscription({ marketplace: 'ProviderX', subscriptionId: 'sub-b' })).rejects.toMatchObject({ kind: 'input' });
      await expect(grpc.listAuditReports({ marketplace: 'ProviderA', subscriptionId: 'nosuch' })).rejects.toMatchObject({ kind: 'input' });
    });

    it('revokes: state Revoked, contracts revoked, audited; a second revoke is 400', async () => {
      const revoked = await grpc.revokeSubscription({ marketplace: 'ProviderB', subscriptionId: 'sub-b', actor: 'root' });
      expect(revoked).toMatchObject({ state: 'Revoked', isRevocable: false });
      expect(dir.revoked).toContain(503);
      expect(
        await db.table('audit_events').where({ marketplace: 'ProviderB', subscription_id: 'sub-b' }).orderBy('id').pluck('description'),
      ).toEqual([expect.stringMatching(/revoked by site admin root/)]);
      await expect(grpc.revokeSubscription({ marketplace: 'ProviderB', subscriptionId: 'sub-b', actor: 'root' })).rejects.toMatchObject({
        kind: 'input',
        message: expect.stringMatching(/not revocable/),
      });
      await expect(report('ProviderA', 'nosuch', records(1))).rejects.toMatchObject({ kind: 'validation' });
    });

    it('pings the first and third providers’ readiness (400 when it does not answer, and for the second provider)', async () => {
      expect(await grpc.pingSubscription({ marketplace: 'ProviderA', subscriptionId: 'sub-a' })).toMatchObject({ ready: true });
      expect(await grpc.pingSubscription({ marketplace: 'ProviderC', subscriptionId: 'sub-c' })).toMatchObject({ ready: true });
      await expect(grpc.pingSubscription({ marketplace: 'ProviderB', subscriptionId: 'sub-b' })).rejects.toMatchObject({ kind: 'input' });
      aws.dryRun = 'InvalidProductCodeException';
      await expect(grpc.pingSubscription({ marketplace: 'ProviderA', subscriptionId: 'sub-a' })).rejects.toMatchObject({
        kind: 'input',
        message: expect.stringMatching(/not ready.*InvalidProductCode/),
      });
      aws.dryRun = 'DryRunOperation';
    });

    it('groups the audit log by UTC month, newest period first', async () => {
      await db.table('audit_events').insert([
        {
          marketplace: 'ProviderA',
          subscription_id: 'sub-a',
          status: 'Succeeded',
          operation_type: 'BIND',
          description: 'bound',
          data: '{}',
          timestamp: new Date('2026-09-30T23:59:00Z'),
        },
        {
          marketplace: 'ProviderA',
          subscription_id: 'sub-a',
          status: 'Failed',
          operation_type: 'BIND',
          description: 'x',
          data: '{"httpStatus":403}',
          timestamp: new Date('2026-10-01T00:01:00Z'),
        },
        {
          marketplace: 'ProviderA',
          subscription_id: 'sub-a',
          status: 'Replayed',
          operation_type: 'BIND',
          description: 'y',
          data: '{}',
          timestamp: new Date('2026-10-02T00:00:00Z'),
        },
        {
          marketplace: 'ProviderA',
          subscription_id: 'other',
          status: 'Succeeded',
          operation_type: 'BIND',
          description: 'z',
          data: '{}',
          timestamp: new Date('2026-10-02T00:00:00Z'),
        },
      ]);
      const out = await grpc.listAuditReports({ marketplace: 'ProviderA', subscriptionId: 'sub-a' });
      expect(out.periods.map((p) => [p.period, p.events.map((e) => e.status)])).toEqual([
        ['2026-10', ['Failed', 'Replayed']],
        ['2026-09', ['Succeeded']],
      ]);
      expect(JSON.parse(out.periods[0].events[0].dataJson)).toEqual({ httpStatus: 403 });
      expect(Number(out.periods[1].events[0].timestampMs)).toBe(Date.parse('2026-09-30T23:59:00Z'));
    });

    it('lists setting warnings per marketplace', async () => {
      const out = await grpc.getSettingWarnings({});
      const of = (m: string) => out.marketplaces.find((x) => x.marketplace === m)!.warnings;
      expect(out.marketplaces.map((m) => m.marketplace)).toEqual(['ProviderA', 'ProviderB', 'ProviderC']);
      expect(of('ProviderA').map((w) => w.msg)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/PROVIDERA_METERING_ENDPOINT .* is not HTTPS/),
          expect.stringMatching(/MARKETPLACE_TRUSTED_PROXIES/),
        ]),
      );
      expect(of('ProviderA').some((w) => w.level === 'Error')).toBe(false);
      expect(of('ProviderC').map((w) => w.msg)).toEqual(
        expect.arrayContaining([expect.stringMatching(/PROVIDERC_CONSUMER_ID is not set/)]),
      );
      expect(of('ProviderB')).toEqual([]);
    });
  });
});
