import { openDatabase, type Database } from '@platform/db';
import { describeMigrationRoundTrips } from '@platform/service-testing';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';

// No migration changes an earlier table yet, so no seeded rows are needed to check data survives.
describeMigrationRoundTrips('billing', migrations);

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
      ]),
    );
  });
});
