import { openDatabase, type Database } from '@platform/db';
import { describeMigrationRoundTrips } from '@platform/service-testing';
import { createTestDatabase } from '@platform/testing';
import { agentV1 } from '@platform/proto';
import { migrations } from '../migrations';
import { sampleRows } from '../src/ingestion/ingestion';
import { rollUpSamples, rollUpSamplesByMonth, toSampleColumns } from '../src/ingestion/ingestion-store';
import { keepAllPoints } from '../src/usage/daily-series';

const H = 3_600_000;
const CLUSTER = '0c000000-0000-4000-8000-000000000001';
const sample = (startMs: number, endMs: number, over: Partial<agentV1.UsageSample> = {}): agentV1.UsageSample => ({
  product: 'productdb',
  contractId: 0,
  licenseId: 'lic-1',
  userId: 2,
  clusterUid: CLUSTER,
  clusterName: 'hub-1',
  hosting: 'aws',
  namespace: 'db',
  namespaceUid: '0b000000-0000-4000-8000-000000000001',
  group: 'kubedb.com',
  kind: 'Postgres',
  name: 'pg-1',
  objectUid: 'o-1',
  version: '16.4',
  topology: agentV1.Topology.TOPOLOGY_CLUSTER,
  replicas: 3,
  startMs,
  endMs,
  resources: [
    { resource: 'cpu', request: 500, limit: 1000, used: 250 },
    { resource: 'memory', request: 2 ** 30, limit: 0, used: 0 },
  ],
  ...over,
});
const oct2 = Date.UTC(2026, 9, 2);

describeMigrationRoundTrips('billing', migrations, {
  // The daily rollups of the samples already stored.
  '20261124070000_usage_object_days': {
    async before(knex, schema) {
      const rows = [
        // Stored before samples were split at midnight: 22:00 to 02:00 counts on its first day, as the views counted it.
        ...sampleRows(sample(oct2 - 2 * H, oct2 + 2 * H))
          .slice(0, 1)
          .map((r) => ({ ...r, endAt: new Date(oct2 + 2 * H) })),
        ...sampleRows(sample(oct2 + 2 * H, oct2 + 3 * H)),
        // The same day under another contract: a row of its own.
        ...sampleRows(sample(oct2 + 3 * H, oct2 + 5 * H, { contractId: 5, replicas: 1 })),
        ...sampleRows(sample(oct2 + 5 * H, oct2 + 6 * H, { objectUid: 'o-2', product: 'productbackup' })),
      ];
      await knex.withSchema(schema).table('usage_samples').insert(rows.map(toSampleColumns));
    },
    async after(knex, schema) {
      const days = async () =>
        (
          await knex.raw(
            `select to_char(day, 'YYYY-MM-DD') as day, to_char(month, 'YYYY-MM-DD') as month, object_uid, product, contract_id, samples,
                    replicas, cpu_peak_used, cpu_core_hours::float8, memory_gib_hours::float8, object_hours::float8, replica_hours::float8
               from ??.usage_object_days order by object_uid, day, contract_id`,
            [schema],
          )
        ).rows;
      const common = { month: '2026-10-01', cpu_peak_used: 250 };
      expect(await days()).toEqual([
        {
          ...common,
          day: '2026-10-01',
          object_uid: 'o-1',
          product: 'productdb',
          contract_id: 0,
          samples: 1,
          replicas: 3,
          cpu_core_hours: 1,
          memory_gib_hours: 4,
          object_hours: 4,
          replica_hours: 12,
        },
        {
          ...common,
          day: '2026-10-02',
          object_uid: 'o-1',
          product: 'productdb',
          contract_id: 0,
          samples: 1,
          replicas: 3,
          cpu_core_hours: 0.25,
          memory_gib_hours: 1,
          object_hours: 1,
          replica_hours: 3,
        },
        {
          ...common,
          day: '2026-10-02',
          object_uid: 'o-1',
          product: 'productdb',
          contract_id: 5,
          samples: 1,
          replicas: 1,
          cpu_core_hours: 0.5,
          memory_gib_hours: 2,
          object_hours: 2,
          replica_hours: 2,
        },
        {
          ...common,
          day: '2026-10-02',
          object_uid: 'o-2',
          product: 'productbackup',
          contract_id: 0,
          samples: 1,
          replicas: 3,
          cpu_core_hours: 0.25,
          memory_gib_hours: 1,
          object_hours: 1,
          replica_hours: 3,
        },
      ]);
      // Ingestion's rollup of the same samples makes the very same rows.
      const all = async () => (await knex.raw('select * from ??.usage_object_days order by 1, 2, 3, 4, 5', [schema])).rows;
      const backfilled = await all();
      await knex.raw('truncate ??.usage_object_days', [schema]);
      await knex.raw(rollUpSamples(`"${schema}".usage_samples`), [schema]);
      expect(await all()).toEqual(backfilled);
    },
  },
  // The monthly rollups of the samples already stored (the ones above and these), and the daily rollups' float8 copies.
  '20261124140000_usage_object_months': {
    async before(knex, schema) {
      const rows = [
        // o-1 again in October, renamed: its month's names become these, its sums grow.
        ...sampleRows(sample(oct2 + 24 * H, oct2 + 25 * H, { name: 'pg-1-renamed', version: '17.0', clusterName: 'hub-1b' })),
        // o-1 in November: a month of its own.
        ...sampleRows(sample(Date.UTC(2026, 10, 3), Date.UTC(2026, 10, 3) + 2 * H)),
      ];
      await knex.withSchema(schema).table('usage_samples').insert(rows.map(toSampleColumns));
    },
    async after(knex, schema) {
      const { rows } = await knex.raw(
        `select to_char(month, 'YYYY-MM-DD') as month, object_uid, product, contract_id, samples, cluster_name, name, version,
                replicas, cpu_core_hours::float8, object_hours::float8, replica_hours::float8, object_hours_f8, replica_hours_f8
           from ??.usage_object_months order by object_uid, month, contract_id`,
        [schema],
      );
      const o1 = { object_uid: 'o-1', product: 'productdb' };
      expect(rows).toEqual([
        // 4 h on Oct 1-2 (before the split at midnight), 1 h, and 1 h on Oct 3 renamed: the last sample's names.
        {
          ...o1,
          month: '2026-10-01',
          contract_id: 0,
          samples: 3,
          cluster_name: 'hub-1b',
          name: 'pg-1-renamed',
          version: '17.0',
          replicas: 3,
          cpu_core_hours: 1.5,
          object_hours: 6,
          replica_hours: 18,
          object_hours_f8: 6,
          replica_hours_f8: 18,
        },
        {
          ...o1,
          month: '2026-10-01',
          contract_id: 5,
          samples: 1,
          cluster_name: 'hub-1',
          name: 'pg-1',
          version: '16.4',
          replicas: 1,
          cpu_core_hours: 0.5,
          object_hours: 2,
          replica_hours: 2,
          object_hours_f8: 2,
          replica_hours_f8: 2,
        },
        {
          ...o1,
          month: '2026-11-01',
          contract_id: 0,
          samples: 1,
          cluster_name: 'hub-1',
          name: 'pg-1',
          version: '16.4',
          replicas: 3,
          cpu_core_hours: 0.5,
          object_hours: 2,
          replica_hours: 6,
          object_hours_f8: 2,
          replica_hours_f8: 6,
        },
        {
          object_uid: 'o-2',
          product: 'productbackup',
          month: '2026-10-01',
          contract_id: 0,
          samples: 1,
          cluster_name: 'hub-1',
          name: 'pg-1',
          version: '16.4',
          replicas: 3,
          cpu_core_hours: 0.25,
          object_hours: 1,
          replica_hours: 3,
          object_hours_f8: 1,
          replica_hours_f8: 3,
        },
      ]);
      // Ingestion's monthly rollup of the same samples makes the very same rows.
      const all = async () => (await knex.raw('select * from ??.usage_object_months order by 1, 2, 3, 4', [schema])).rows;
      const backfilled = await all();
      await knex.raw('truncate ??.usage_object_months', [schema]);
      await knex.raw(rollUpSamplesByMonth(`"${schema}".usage_samples`), [schema]);
      expect(await all()).toEqual(backfilled);
      // The days' float8 copies are their sums' float8.
      const { rows: copies } = await knex.raw(
        `select count(*)::int as days, count(*) filter (where cpu_core_hours_f8 = cpu_core_hours::float8 and object_hours_f8 = object_hours::float8
                  and memory_gib_hours_f8 = memory_gib_hours::float8 and storage_gib_hours_f8 = storage_gib_hours::float8
                  and replica_hours_f8 = replica_hours::float8)::int as same
           from ??.usage_object_days`,
        [schema],
      );
      expect(copies).toEqual([{ days: 4, same: 4 }]);
    },
  },
  // Each object's daily points of a month, from its days.
  '20261125090000_usage_month_daily_points': {
    async after(knex, schema) {
      const { rows } = await knex.raw(
        `select p.object_uid, array_length(p.daily, 1) as slots, array_to_string(p.daily, ',') as points,
                (select json_agg(json_build_object('date', to_char(d.day, 'YYYY-MM-DD'), 'cpuCoreHours', d.cpu, 'memoryGiBHours', d.memory,
                   'storageGiBHours', d.storage, 'objectHours', d.hours) order by d.day)
                 from (select day, sum(cpu_core_hours)::float8 as cpu, sum(memory_gib_hours)::float8 as memory,
                         sum(storage_gib_hours)::float8 as storage, sum(object_hours)::float8 as hours
                       from ??.usage_object_days d
                       where (d.month, d.cluster_uid, d.object_uid) = (p.month, p.cluster_uid, p.object_uid) group by day) d) as days
           from ??.usage_object_month_points p order by 1, p.month`,
        [schema, schema],
      );
      // Every object and month with day rollups has its points.
      const { rows: objects } = await knex.raw(
        'select count(distinct (month, cluster_uid, object_uid))::int as n from ??.usage_object_days',
        [schema],
      );
      expect(rows).toHaveLength(objects[0].n);
      expect(rows.length).toBeGreaterThan(1);
      for (const row of rows) {
        expect(row.slots).toBe(31);
        expect(JSON.parse(`[${row.points}]`)).toEqual(row.days);
      }
      // Ingestion's own statement keeps the very same points.
      const all = async () => (await knex.raw('select * from ??.usage_object_month_points order by 1, 2, 3', [schema])).rows;
      const backfilled = await all();
      await knex.raw('truncate ??.usage_object_month_points', [schema]);
      await knex.raw(keepAllPoints(), [schema, schema]);
      expect(await all()).toEqual(backfilled);
    },
  },
});

describe('billing schema, fully migrated', () => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('comments every table and every column', async () => {
    const { rows } = await db.knex.raw(
      `select c.relname as "table", a.attname as "column"
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
         join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
        where n.nspname = 'billing' and c.relkind = 'r' and c.relname not like 'knex_%'
          and col_description(c.oid, a.attnum) is null`,
    );
    expect(rows).toEqual([]);
    const tables = await db.knex.raw(
      `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'billing' and c.relkind = 'r' and c.relname not like 'knex_%' and obj_description(c.oid, 'pg_class') is null`,
    );
    expect(tables.rows).toEqual([]);
  });

  it('holds the tables ingestion writes, with the indexes the dashboard queries use', async () => {
    const { rows } = await db.knex.raw(`select indexname from pg_indexes where schemaname = 'billing' order by indexname`);
    expect(rows.map((r: { indexname: string }) => r.indexname)).toEqual(
      expect.arrayContaining([
        'agent_seen_messages_pkey',
        'agent_seen_messages_seen_at',
        'licensed_products_pkey',
        'licensed_products_last_received',
        'licensed_products_cluster_license',
        'resource_events_key_version',
        'resource_events_by_license_time',
        'resource_events_by_resource',
        'usage_samples_object_interval',
        'usage_samples_month_product_cluster',
        'usage_samples_month_product_contract',
        'usage_samples_month_hosting',
        'system_outages_overlap',
        'system_outages_end_at',
        'usage_object_days_pkey',
        'usage_object_days_month_product',
        'usage_object_months_pkey',
        'usage_object_months_month_product',
      ]),
    );
  });
});
