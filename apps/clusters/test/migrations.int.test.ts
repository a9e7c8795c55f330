import type { Knex } from 'knex';
import { describeMigrationRoundTrips } from '@platform/service-testing';
import { migrations } from '../migrations';

const HUB_UID = '2f1c7a3e-6a2b-4d0e-9a51-0c7e4b8d9f10';
const table = (knex: Knex, schema: string, name: string) => knex.withSchema(schema).table(name);

/** The inventory rows every migration after inventory must leave alone. */
async function expectInventorySurvived(knex: Knex, schema: string): Promise<void> {
  expect(await table(knex, schema, 'clusters').select('uid', 'name', 'owner_type', 'owner_id', 'status')).toEqual([
    { uid: HUB_UID, name: 'hub-1', owner_type: 'organization', owner_id: 7, status: { phase: 'Ready' } },
  ]);
  expect(await table(knex, schema, 'cluster_namespaces').pluck('name')).toEqual(['default']);
  expect(await table(knex, schema, 'cluster_features').select('feature', 'version')).toEqual([{ feature: 'productdb', version: '1.2.0' }]);
}

describeMigrationRoundTrips('clusters', migrations, {
  '20261122020000_outbox': {
    async before(knex, schema) {
      const [{ id }] = await table(knex, schema, 'clusters')
        .insert({ uid: HUB_UID, name: 'hub-1', owner_type: 'organization', owner_id: 7, status: JSON.stringify({ phase: 'Ready' }) })
        .returning('id');
      await table(knex, schema, 'cluster_namespaces').insert({ cluster_id: id, name: 'default' });
      await table(knex, schema, 'cluster_features').insert({ cluster_id: id, feature: 'productdb', version: '1.2.0' });
      // A second hub of the same name in the same owner is refused.
      await expect(
        table(knex, schema, 'clusters').insert({ uid: crypto.randomUUID(), name: 'hub-1', owner_type: 'organization', owner_id: 7 }),
      ).rejects.toThrow();
    },
    async after(knex, schema) {
      await expectInventorySurvived(knex, schema);
      expect(await table(knex, schema, 'outbox').count({ n: '*' })).toEqual([{ n: 0 }]);
    },
  },
  '20261122030000_agent_ingestion': {
    async before(knex, schema) {
      await table(knex, schema, 'clusters').delete();
      await table(knex, schema, 'clusters').insert({ uid: HUB_UID, name: 'hub-1', owner_type: 'organization', owner_id: 7 });
    },
    async after(knex, schema) {
      expect(await table(knex, schema, 'clusters').select('uid', 'name', 'observed_at')).toEqual([
        { uid: HUB_UID, name: 'hub-1', observed_at: null },
      ]);
      const id = crypto.randomUUID();
      await table(knex, schema, 'agent_seen_messages').insert({ message_id: id, cluster_uid: HUB_UID, kind: 'inventory' });
      await expect(
        table(knex, schema, 'agent_seen_messages').insert({ message_id: id, cluster_uid: HUB_UID, kind: 'inventory' }),
      ).rejects.toThrow();
      await table(knex, schema, 'agent_seen_messages').delete();
    },
  },
});
