import { subjectOf } from '@platform/agent-protocol';
import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase, eventually } from '@platform/testing';
import { migrations } from '../migrations';
import { Ingestion, openWithAccounts, sampleRows } from '../src/ingestion/ingestion';
import { seal, testCluster, testLicensing, toBusPayload, withBadSignature } from './agent-reports';

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

describe('billing ingestion: verified reports applied once in one transaction with their id', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let ingestion: Ingestion;
  const cluster = testCluster();
  const { clusterUID, keys } = cluster;

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    ingestion = new Ingestion(db, openWithAccounts(cluster.accounts), testLicensing().records, quiet);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const seen = async () => Number((await db.table('agent_seen_messages').count({ n: '*' }))[0].n);

  it('keeps the first and last received time per user, cluster, license and product; a repeated message is skipped', async () => {
    const later = toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2026, 5, 10)), keys));
    const earlier = toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2026, 4, 1)), keys));
    const subject = subjectOf(clusterUID, 'license-usage');
    expect(await ingestion.receive('license-usage', subject, later)).toBe('applied');
    expect(await ingestion.receive('license-usage', subject, later)).toBe('duplicate');
    expect(await ingestion.receive('license-usage', subject, earlier)).toBe('applied');
    const rows = await db.table('licensed_products').select();
    expect(rows).toEqual([
      {
        user_id: cluster.ownerId,
        cluster_uid: clusterUID,
        license_id: 'lic-1',
        product: 'productdb',
        first_received_at: new Date(Date.UTC(2026, 4, 1)),
        last_received_at: new Date(Date.UTC(2026, 5, 10)),
      },
    ]);
  });

  it('stores a resource event once per (key, version), even under a new message id', async () => {
    const subject = subjectOf(clusterUID, 'resource-event');
    expect(await ingestion.receive('resource-event', subject, toBusPayload(seal('resource-event', cluster.event(1), keys)))).toBe(
      'applied',
    );
    expect(await ingestion.receive('resource-event', subject, toBusPayload(seal('resource-event', cluster.event(1), keys)))).toBe(
      'applied',
    );
    expect(await ingestion.receive('resource-event', subject, toBusPayload(seal('resource-event', cluster.event(2), keys)))).toBe(
      'applied',
    );
    const rows = await db.table('resource_events').orderBy('version').select('key', 'version', 'resource_id', 'group', 'resource');
    expect(rows).toEqual(
      [1, 2].map((version) => ({
        key: 'kubedb.com/postgreses/db/pg-1',
        version,
        resource_id: { group: 'kubedb.com', kind: 'Postgres', namespace: 'db', name: 'pg-1' },
        group: 'kubedb.com',
        resource: 'postgreses',
      })),
    );
  });

  it('splits a usage sample at the month boundary, keeping its measures', async () => {
    const subject = subjectOf(clusterUID, 'usage-sample');
    const start = Date.UTC(2026, 5, 30, 23, 30);
    const end = Date.UTC(2026, 6, 1, 0, 30);
    const message = toBusPayload(seal('usage-sample', cluster.sample(start, end), keys));
    expect(await ingestion.receive('usage-sample', subject, message)).toBe('applied');
    expect(await ingestion.receive('usage-sample', subject, message)).toBe('duplicate');
    const rows = await db
      .table('usage_samples')
      .orderBy('start_at')
      .select(
        db.knex.raw(`to_char(month, 'YYYY-MM-DD') as month`),
        'start_at',
        'end_at',
        'cpu_request',
        'memory_used',
        'storage_limit',
        'topology',
        'replicas',
      );
    expect(rows).toEqual([
      {
        month: '2026-06-01',
        start_at: new Date(start),
        end_at: new Date(Date.UTC(2026, 6, 1)),
        cpu_request: 500,
        memory_used: 2 ** 29,
        storage_limit: 0,
        topology: 'CLUSTER',
        replicas: 3,
      },
      {
        month: '2026-07-01',
        start_at: new Date(Date.UTC(2026, 6, 1)),
        end_at: new Date(end),
        cpu_request: 500,
        memory_used: 2 ** 29,
        storage_limit: 0,
        topology: 'CLUSTER',
        replicas: 3,
      },
    ]);
  });

  it('refuses a message whose signature does not verify, and writes nothing', async () => {
    const before = await seen();
    const bad = withBadSignature(toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2027, 0, 1)), keys)));
    expect(await ingestion.receive('license-usage', subjectOf(clusterUID, 'license-usage'), bad)).toBe('refused');
    expect(await seen()).toBe(before);
    expect((await db.table('licensed_products').first()).last_received_at).toEqual(new Date(Date.UTC(2026, 5, 10)));
  });

  it('drops a verified report that can never apply (an interval ending before it starts) without recording its id', async () => {
    const before = await seen();
    const message = toBusPayload(seal('usage-sample', cluster.sample(Date.UTC(2026, 1, 2), Date.UTC(2026, 1, 1)), keys));
    expect(await ingestion.receive('usage-sample', subjectOf(clusterUID, 'usage-sample'), message)).toBe('invalid');
    expect(await seen()).toBe(before);
  });

  it('propagates a failure while applying, leaving no id behind, so a redelivery applies the message', async () => {
    const message = toBusPayload(seal('resource-event', cluster.event(3), keys));
    const subject = subjectOf(clusterUID, 'resource-event');
    await db.knex.raw('alter table billing.resource_events rename to resource_events_away');
    try {
      await expect(ingestion.receive('resource-event', subject, message)).rejects.toThrow(/resource_events/);
    } finally {
      await db.knex.raw('alter table billing.resource_events_away rename to resource_events');
    }
    expect(await ingestion.receive('resource-event', subject, message)).toBe('applied');
    expect(await db.table('resource_events').where({ version: 3 }).count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('drops a report with a field longer than its column as invalid, instead of failing it on every delivery', async () => {
    const before = await seen();
    const message = toBusPayload(seal('resource-event', cluster.event(40, { licenseId: 'l'.repeat(256) }), keys));
    expect(await ingestion.receive('resource-event', subjectOf(clusterUID, 'resource-event'), message)).toBe('invalid');
    expect(await seen()).toBe(before);
  });

  it('applies a batch in one go: repeats within it once, refusals and invalid reports acknowledged', async () => {
    const subject = subjectOf(clusterUID, 'license-usage');
    const first = toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2025, 0, 1)), keys));
    const last = toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2027, 5, 1)), keys));
    const bad = withBadSignature(toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2024, 0, 1)), keys)));
    const invalid = toBusPayload(seal('license-usage', { ...cluster.usage(Date.UTC(2026, 0, 1)), product: '' }, keys));
    const before = await seen();
    const done = await ingestion.receiveBatch(
      'license-usage',
      [first, last, first, bad, invalid].map((payload) => ({ subject, payload })),
    );
    expect(done).toEqual([true, true, true, true, true]);
    // Two new ids; the row widened by both (the two usages of one key merged in one statement).
    expect(await seen()).toBe(before + 2);
    const row = await db.table('licensed_products').where({ user_id: cluster.ownerId, license_id: 'lic-1', product: 'productdb' }).first();
    expect(row.first_received_at).toEqual(new Date(Date.UTC(2025, 0, 1)));
    expect(row.last_received_at).toEqual(new Date(Date.UTC(2027, 5, 1)));
  });

  it('when a batch cannot be written, applies the others one by one and hands back only the one that fails', async () => {
    const subject = subjectOf(clusterUID, 'resource-event');
    const poison = 'kubedb.com/postgreses/db/poison';
    await db.knex.raw(`
      create function billing.refuse_poison() returns trigger language plpgsql as $$
      begin if new.key = '${poison}' then raise exception 'poison event refused'; end if; return new; end $$;
      create trigger refuse_poison before insert on billing.resource_events for each row execute function billing.refuse_poison();`);
    const events = [cluster.event(50), cluster.event(1, { key: poison }), cluster.event(51)];
    const payloads = events.map((e) => toBusPayload(seal('resource-event', e, keys)));
    try {
      expect(await ingestion.receiveBatch('resource-event', payloads.map((payload) => ({ subject, payload })))).toEqual([true, false, true]);
      expect(await db.table('resource_events').whereIn('version', [50, 51]).count({ n: '*' })).toEqual([{ n: 2 }]);
      expect(await db.table('resource_events').where({ key: poison }).count({ n: '*' })).toEqual([{ n: 0 }]);
    } finally {
      await db.knex.raw('drop trigger refuse_poison on billing.resource_events; drop function billing.refuse_poison()');
    }
    // Its redelivery applies it; the two applied ones come back as repeats.
    expect(await ingestion.receiveBatch('resource-event', payloads.map((payload) => ({ subject, payload })))).toEqual([true, true, true]);
    expect(await db.table('resource_events').where({ key: poison }).count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('propagates an error of the account lookup (not a refusal), so the message is redelivered', async () => {
    const failing = new Ingestion(
      db,
      openWithAccounts({ accountOf: async () => Promise.reject(new Error('orgs-teams unavailable')), mayReportFor: async () => true }),
      testLicensing().records,
      quiet,
    );
    const message = toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2026, 5, 11)), keys));
    await expect(failing.receive('license-usage', subjectOf(clusterUID, 'license-usage'), message)).rejects.toThrow(
      'orgs-teams unavailable',
    );
  });

  it('forgets seen ids older than the retention cut', async () => {
    const n = await seen();
    expect(await ingestion.forgetSeenBefore(new Date(Date.now() - 60_000))).toBe(0);
    expect(await ingestion.forgetSeenBefore(new Date(Date.now() + 60_000))).toBe(n);
  });

  it('prunes ids past the retention periodically, starting at once', async () => {
    const message = toBusPayload(seal('license-usage', cluster.usage(Date.UTC(2026, 5, 12)), keys));
    expect(await ingestion.receive('license-usage', subjectOf(clusterUID, 'license-usage'), message)).toBe('applied');
    await db.table('agent_seen_messages').update({ seen_at: new Date(Date.now() - 31 * 86_400_000) });
    const stop = ingestion.pruneSeenPeriodically();
    try {
      await eventually(async () => (await seen()) === 0, 5_000);
    } finally {
      stop();
    }
  });
});

describe('sampleRows', () => {
  it('keeps a sample inside one day whole, and splits one at every UTC midnight, so each row lies in one day and one month', () => {
    const { sample } = testCluster();
    expect(sampleRows(sample(Date.UTC(2026, 2, 1), Date.UTC(2026, 2, 1, 6))).map((r) => r.month)).toEqual(['2026-03-01']);
    const rows = sampleRows(sample(Date.UTC(2026, 0, 30, 18), Date.UTC(2026, 1, 1, 6)));
    expect(rows.map((r) => [r.month, r.startAt.toISOString(), r.endAt.toISOString()])).toEqual([
      ['2026-01-01', '2026-01-30T18:00:00.000Z', '2026-01-31T00:00:00.000Z'],
      ['2026-01-01', '2026-01-31T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
      ['2026-02-01', '2026-02-01T00:00:00.000Z', '2026-02-01T06:00:00.000Z'],
    ]);
    // Every part keeps the sample's measures (averages over the interval).
    expect(new Set(rows.map((r) => JSON.stringify(r.resources))).size).toBe(1);
  });
});
