import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * The claimable check of the webhook listener (docs/marketplaces.md): a claim made by a marketplace
 * binding is checked only after its retry backoff (the buyer's installer is still deploying), unless its
 * marketplace has reported the deployment running, which flags it claimable at once.
 */
export const claimBackoff: Migration = {
  name: '20261123010000_claim_backoff',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('org_claims', (t) => {
      t.timestamp('retry_after', { useTz: true }).nullable().comment('Until then the claimable check answers 429; null: no backoff');
      t.boolean('flagged_claimable')
        .notNullable()
        .defaultTo(false)
        .comment('Flagged claimable by its marketplace; the backoff no longer applies');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('org_claims', (t) => {
      t.dropColumn('flagged_claimable');
      t.dropColumn('retry_after');
    });
  },
};
