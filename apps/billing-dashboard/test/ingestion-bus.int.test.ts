import { subjectOf } from '@platform/agent-protocol';
import { InProcessBus, type Bus } from '@platform/bus';
import { NatsBus } from '@platform/bus/nats';
import { openDatabase, type Database } from '@platform/db';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { metricsText } from '@platform/telemetry';
import { createTestDatabase, eventually, testNatsUrl } from '@platform/testing';
import { migrations } from '../migrations';
import { createBillingDashboardApp } from '../src/app';
import { durableName, startIngestionConsumers } from '../src/ingestion/consumer';
import { Ingestion, openWithAccounts } from '../src/ingestion/ingestion';
import { seal, testCluster, testLicensing, toBusPayload, withBadSignature } from './agent-reports';

/**
 * The app's durable JetStream consumers against real NATS and Postgres: a report delivered three times is
 * applied once, a bad signature changes nothing, a report that fails to apply is redelivered and applied later.
 */
describe('billing-dashboard ingests agent reports from JetStream', () => {
  const cluster = testCluster();
  const { clusterUID, keys } = cluster;
  // A fresh durable consumer per run, on this cluster's reports only: nothing of earlier runs replays.
  const durablePrefix = `billing-test-${clusterUID.slice(0, 8)}`;
  let app: AppUnderTest;
  let bus: Bus;
  let db: Database;

  beforeAll(async () => {
    app = await startAppForTest(
      createBillingDashboardApp({
        busAccountLookup: cluster.accounts,
        licensingRecords: testLicensing().records,
        ingestion: { durablePrefix, clusterUID },
      }),
    );
    db = app.running.ctx.db!;
    bus = await NatsBus.create(await testNatsUrl(), 'billing-ingestion-test', { namespace: app.running.ctx.bus!.namespace });
  }, 30_000);
  afterAll(async () => {
    await bus?.close();
    await app?.stop();
  });

  const count = async (table: string, where: Record<string, unknown> = {}) =>
    Number((await db.table(table).where(where).count({ n: '*' }))[0].n);
  const seenIds = () => count('agent_seen_messages');
  /** A counter's value in this process's /metrics text (the app runs in the test's process), 0 when absent. */
  const metric = async (series: string) => {
    const line = (await metricsText()).body.split('\n').find((l) => l.startsWith(series + ' '));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };

  it('applies each kind once though each report is delivered three times', async () => {
    const usage = toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2026, 5, 10)), keys));
    const event = toBusPayload(seal('resource-event', cluster.event(1), keys));
    const sample = toBusPayload(seal('usage-sample', cluster.sample(Date.UTC(2026, 5, 1), Date.UTC(2026, 5, 1, 1)), keys));
    for (let i = 0; i < 3; i++) {
      await bus.publish(subjectOf(clusterUID, 'license-usage'), usage);
      await bus.publish(subjectOf(clusterUID, 'resource-event'), event);
      await bus.publish(subjectOf(clusterUID, 'usage-sample'), sample);
    }
    // Markers after the repeats: each consumer handles its messages in order, so once a marker is applied,
    // every repeat before it has been handled.
    await bus.publish(
      subjectOf(clusterUID, 'license-usage'),
      toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2026, 5, 20)), keys)),
    );
    await bus.publish(subjectOf(clusterUID, 'resource-event'), toBusPayload(seal('resource-event', cluster.event(2), keys)));
    await bus.publish(
      subjectOf(clusterUID, 'usage-sample'),
      toBusPayload(seal('usage-sample', cluster.sample(Date.UTC(2026, 5, 1, 1), Date.UTC(2026, 5, 1, 2)), keys)),
    );
    await eventually(async () => (await seenIds()) === 6, 15_000);
    expect(await db.table('licensed_products').select('first_received_at', 'last_received_at')).toEqual([
      { first_received_at: new Date(Date.UTC(2026, 5, 10)), last_received_at: new Date(Date.UTC(2026, 5, 20)) },
    ]);
    expect(await db.table('resource_events').orderBy('version').pluck('version')).toEqual([1, 2]);
    expect(await count('usage_samples')).toBe(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(await seenIds()).toBe(6);
  });

  it('refuses a report with a bad signature and changes nothing', async () => {
    const before = await seenIds();
    const refusedBefore = await metric('billing_agent_reports_total{kind="license-usage",outcome="refused"}');
    const bad = withBadSignature(toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2027, 0, 1)), keys)));
    await bus.publish(subjectOf(clusterUID, 'license-usage'), bad);
    // A marker after it: another license, so it adds its own row.
    await bus.publish(
      subjectOf(clusterUID, 'license-usage'),
      toBusPayload(seal('license-usage', { ...cluster.usage(Date.UTC(2026, 5, 21)), licenseId: 'lic-2' }, keys)),
    );
    await eventually(async () => (await count('licensed_products', { license_id: 'lic-2' })) === 1, 15_000);
    expect(await seenIds()).toBe(before + 1);
    expect(await metric('billing_agent_reports_total{kind="license-usage",outcome="refused"}')).toBe(refusedBefore + 1);
    expect(await db.table('licensed_products').where({ license_id: 'lic-1' }).pluck('last_received_at')).toEqual([
      new Date(Date.UTC(2026, 5, 20)),
    ]);
  });

  it('redelivers a report that failed to apply, and applies it once later', async () => {
    const before = await seenIds();
    await db.knex.raw('alter table billing.usage_samples rename to usage_samples_away');
    let restored = false;
    try {
      const sample = toBusPayload(seal('usage-sample', cluster.sample(Date.UTC(2026, 6, 1), Date.UTC(2026, 6, 1, 1)), keys));
      await bus.publish(subjectOf(clusterUID, 'usage-sample'), sample);
      // Delivered and failed (the table is away), handed back unacknowledged: JetStream redelivers it 0.5 s later.
      const failed = `bus_messages_refused_total{consumer="${durableName('usage-sample', durablePrefix)}"}`;
      await eventually(async () => (await metric(failed)) >= 2, 15_000);
      expect(await seenIds()).toBe(before);
      await db.knex.raw('alter table billing.usage_samples_away rename to usage_samples');
      restored = true;
      await eventually(async () => (await count('usage_samples')) === 3, 15_000);
      expect(await seenIds()).toBe(before + 1);
    } finally {
      if (!restored) await db.knex.raw('alter table billing.usage_samples_away rename to usage_samples');
    }
  }, 30_000);
});

/** The same consumers on the in-process bus of the embedded default: one application per message, redelivery after a failure. */
describe('billing ingestion consumers on the in-process bus', () => {
  const cluster = testCluster();
  const { clusterUID, keys } = cluster;
  let db: Database;
  let drop: () => Promise<void>;
  let bus: InProcessBus;
  let stop: () => Promise<void>;
  const errors: object[] = [];

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    bus = new InProcessBus();
    const log = { warn: () => {}, debug: () => {}, info: () => {}, error: (obj: object) => void errors.push(obj) };
    stop = await startIngestionConsumers(bus, new Ingestion(db, openWithAccounts(cluster.accounts), testLicensing().records, log), {
      log,
      clusterUID,
    });
  });
  afterAll(async () => {
    await stop?.();
    await bus?.close();
    await db?.close();
    await drop?.();
  });

  it('applies a report delivered three times once, and a report that failed once after its redelivery', async () => {
    const usage = toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2026, 5, 10)), keys));
    for (let i = 0; i < 3; i++) await bus.publish(subjectOf(clusterUID, 'license-usage'), usage);
    await eventually(async () => Number((await db.table('agent_seen_messages').count({ n: '*' }))[0].n) === 1);

    await db.knex.raw('alter table billing.resource_events rename to resource_events_away');
    await bus.publish(subjectOf(clusterUID, 'resource-event'), toBusPayload(seal('resource-event', cluster.event(1), keys)));
    await eventually(async () => errors.length > 0);
    await db.knex.raw('alter table billing.resource_events_away rename to resource_events');
    await eventually(async () => Number((await db.table('resource_events').count({ n: '*' }))[0].n) === 1);
    expect(await db.table('licensed_products').count({ n: '*' })).toEqual([{ n: 1 }]);
    expect(await db.table('agent_seen_messages').count({ n: '*' })).toEqual([{ n: 2 }]);
  });
});
