import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * An organization's row version (docs/decisions.md, D128): one more at each edit of its
 * fields, under the row's lock, so the notice of an edit can carry the row and a reader keeping the organization can
 * replace what it keeps by a newer row, never by an older one that reached it later.
 */
export const orgRowVersion: Migration = {
  name: '20270120000000_org_row_version',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.integer('version')
        .notNullable()
        .defaultTo(0)
        .comment("An organization's row version: one more at each edit of its fields (0 for other accounts)");
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.dropColumn('version');
    });
  },
};
