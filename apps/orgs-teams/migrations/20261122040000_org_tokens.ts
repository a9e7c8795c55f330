import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** Machine credentials of organizations (system admin, manager sync token, bus accounts) and standalone-org claims. */
export const orgTokens: Migration = {
  name: '20261122040000_org_tokens',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('org_system_admins', (t) => {
      t.comment('The system admin of each organization: the user account its machine credentials belong to');
      t.bigInteger('org_id').primary().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE').comment('Organization');
      t.bigInteger('uid')
        .notNullable()
        .unique()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('System admin user');
    });
    await knex.schema.withSchema(schema).createTable('manager_sync_tokens', (t) => {
      t.comment('The multi-cluster-manager sync token of an organization (at most one)');
      t.bigInteger('org_id').primary().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE').comment('Organization');
      t.bigInteger('token_id')
        .notNullable()
        .references('id')
        .inTable(`${schema}.access_tokens`)
        .onDelete('CASCADE')
        .comment('The system admin access token it is');
      t.text('secret_ciphertext').nullable().comment('AES-256-GCM of the token until its first read; null afterwards');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Creation time');
    });
    await knex.schema.withSchema(schema).createTable('bus_accounts', (t) => {
      t.comment('Message-bus (NATS) user accounts; only the public key is kept');
      t.bigIncrements('id').comment('Bus account id');
      t.bigInteger('uid').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE').comment('Owning user');
      t.string('account_type', 16).notNullable().defaultTo('user').comment('Account type; user');
      t.string('bus_pub_key', 64).notNullable().unique().comment('NATS user public key (nkey, starts with U)');
      t.string('cluster_id', 255).notNullable().defaultTo('').comment('Cluster the account was issued for');
      t.string('product_name', 255).notNullable().defaultTo('').comment('Product the account was issued for');
      t.boolean('revoked').notNullable().defaultTo(false).comment('Revoked accounts may no longer connect');
      t.timestamp('revoked_at', { useTz: true }).nullable().comment('When it was revoked');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Creation time');
      t.index(['uid']);
    });
    await knex.schema.withSchema(schema).createTable('org_claims', (t) => {
      t.comment('Standalone organizations (made by a marketplace purchase) waiting to be claimed by a user');
      t.uuid('claim_id').primary().comment('Claim id handed to the purchaser');
      t.bigInteger('org_id')
        .notNullable()
        .unique()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('Organization');
      t.bigInteger('claimed_by')
        .nullable()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('SET NULL')
        .comment('User who claimed it; null while claimable');
      t.timestamp('claimed_at', { useTz: true }).nullable().comment('When it was claimed');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it became claimable');
      t.index(['created_at']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('org_claims');
    await knex.schema.withSchema(schema).dropTable('bus_accounts');
    await knex.schema.withSchema(schema).dropTable('manager_sync_tokens');
    await knex.schema.withSchema(schema).dropTable('org_system_admins');
  },
};
