import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Service accounts (docs/service-accounts.md): accounts of type 2 in the one id space of users and organizations,
 * each belonging to an organization or to the whole site, with the custom roles they hold and the Kubernetes
 * ServiceAccounts they stand for. Their tokens are access tokens like any other account's.
 */
export const serviceAccounts: Migration = {
  name: '20261125000000_service_accounts',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.bigInteger('service_account_org_id')
        .nullable()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('Service accounts: the organization it belongs to, null for a site-wide one; null for every other account');
      t.bigInteger('created_by')
        .nullable()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('SET NULL')
        .comment('Service accounts: the account that created it (null once that account is gone, and for other accounts)');
      t.index(['service_account_org_id'], 'accounts_service_account_org_idx');
    });
    await knex.raw("comment on column ??.accounts.type is '0 user, 1 organization, 2 service account'", [schema]);
    await knex.raw(
      'alter table ??.accounts add constraint accounts_service_account_org_check check (type = 2 or service_account_org_id is null)',
      [schema],
    );

    await knex.schema.withSchema(schema).createTable('service_account_roles', (t) => {
      t.comment('Custom roles (authz) a service account holds; mirrored by the tuples user:<account> assignee role:<role>');
      t.bigInteger('account_id')
        .notNullable()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('The service account');
      t.bigInteger('role_id').notNullable().comment('A custom role of its organization (authz.roles; another schema, so no foreign key)');
      t.primary(['account_id', 'role_id']);
    });

    await knex.schema.withSchema(schema).createTable('service_account_subjects', (t) => {
      t.comment('Kubernetes ServiceAccounts a service account stands for: their projected tokens authenticate as it');
      t.string('namespace', 63).notNullable().comment('Kubernetes namespace of the ServiceAccount');
      t.string('name', 253).notNullable().comment('Name of the ServiceAccount');
      t.bigInteger('account_id')
        .notNullable()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('The service account it authenticates as');
      t.primary(['namespace', 'name']);
      t.index(['account_id'], 'service_account_subjects_account_idx');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('service_account_subjects');
    await knex.schema.withSchema(schema).dropTable('service_account_roles');
    await knex.raw('alter table ??.accounts drop constraint accounts_service_account_org_check', [schema]);
    await knex.raw("comment on column ??.accounts.type is '0 user, 1 organization'", [schema]);
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.dropIndex(['service_account_org_id'], 'accounts_service_account_org_idx');
      t.dropColumn('created_by');
      t.dropColumn('service_account_org_id');
    });
  },
};
