import type { Knex } from 'knex';
import { describeMigrationRoundTrips } from '@platform/service-testing';
import { migrations } from '../migrations';

const HUB = '3f1c2a4e-8b3d-4e5f-9a0b-1c2d3e4f5a6b';
const SPOKE = '4f1c2a4e-8b3d-4e5f-9a0b-1c2d3e4f5a6b';

async function contractWithClusters(knex: Knex, schema: string): Promise<void> {
  const [{ id }] = await knex
    .withSchema(schema)
    .table('contracts')
    .insert({ owner_id: 7, owner_login: 'acme', owner_type: 'organization', product: 'productdb', start_at: new Date(), end_at: new Date(Date.now() + 86_400_000) })
    .returning('id');
  await knex.withSchema(schema).table('contract_clusters').insert([
    { contract_id: id, cluster_uid: HUB, display_name: 'given at binding', name: 'renamed' },
    { contract_id: id, cluster_uid: SPOKE, display_name: 'spoke', name: '' },
  ]);
}

describeMigrationRoundTrips('contracts', migrations, {
  '20261201000000_contract_cluster_display_name': {
    before: contractWithClusters,
    // A name an earlier rename set is the display name now; a binding never renamed keeps the one it was given.
    async after(knex, schema) {
      const rows = await knex.withSchema(schema).table('contract_clusters').orderBy('cluster_uid').select('cluster_uid', 'display_name');
      expect(rows).toEqual([
        { cluster_uid: HUB, display_name: 'renamed' },
        { cluster_uid: SPOKE, display_name: 'spoke' },
      ]);
    },
  },
});
