import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Renaming a bound cluster sets its display name on the contract (the name the contract gives the cluster), as the
 * product's clients read it; the cluster's own name is always the inventory's. A name set by an earlier rename
 * moves to `display_name`. The old column stays, empty, so that rolling back restores the table exactly (a
 * dropped column would come back at the end of it).
 */
export const contractClusterDisplayName: Migration = {
  name: '20261201000000_contract_cluster_display_name',
  async up(knex: Knex, schema: string) {
    await knex
      .withSchema(schema)
      .table('contract_clusters')
      .whereNot('name', '')
      .update({ display_name: knex.ref('name'), name: '' });
    await comment(knex, schema, 'display_name', 'Display name: given when binding, set by PATCH .../name');
    await comment(knex, schema, 'name', 'Unused and empty: PATCH .../name sets display_name');
  },
  async down(knex: Knex, schema: string) {
    await comment(knex, schema, 'display_name', 'Display name given when binding');
    await comment(knex, schema, 'name', 'Cluster name set by PATCH .../name; empty: the inventory name');
  },
};

// COMMENT takes no bind parameters: the texts are constants of this file.
const comment = (knex: Knex, schema: string, column: string, text: string) =>
  knex.raw(`comment on column ??.contract_clusters.?? is '${text.replace(/'/g, "''")}'`, [schema, column]);
