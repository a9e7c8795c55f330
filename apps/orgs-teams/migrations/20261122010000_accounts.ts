import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** Accounts (users and organizations in one id space, as in Gitea) and personal access tokens. */
export const accounts: Migration = {
  name: '20261122010000_accounts',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('accounts', (t) => {
      t.comment('Users and organizations; one int64 id space for both');
      t.bigIncrements('id').comment('Account id, shared by users and organizations');
      t.smallint('type').notNullable().comment('0 user, 1 organization');
      t.string('login', 40).notNullable().comment('Login or organization slug as written');
      t.string('lower_login', 40).notNullable().unique().comment('Lower-cased login: logins are unique case-insensitively');
      t.string('full_name', 255).notNullable().defaultTo('').comment('Display name');
      t.string('email', 255).notNullable().defaultTo('').comment('Email address as written (users)');
      t.string('lower_email', 255).nullable().comment('Lower-cased email; unique among users, null for organizations');
      t.text('password_hash').nullable().comment('scrypt hash (users only); never returned');
      t.boolean('must_change_password').notNullable().defaultTo(false).comment('User must change the password at next login');
      t.boolean('is_admin').notNullable().defaultTo(false).comment('Site admin (mirrors the site#admin tuple in authz)');
      t.boolean('active').notNullable().defaultTo(true).comment('Inactive users cannot authenticate');
      t.boolean('prohibit_login').notNullable().defaultTo(false).comment('Login-prohibited users cannot authenticate');
      t.string('avatar_url', 1024).notNullable().defaultTo('').comment('Avatar URL');
      t.string('language', 16).notNullable().defaultTo('').comment('Preferred UI language');
      t.string('location', 255).notNullable().defaultTo('').comment('Free-text location');
      t.string('website', 1024).notNullable().defaultTo('').comment('Website URL');
      t.text('description').notNullable().defaultTo('').comment('Free-text description');
      t.boolean('client_org_user').notNullable().defaultTo(false).comment('Provisioned as a client-organization admin');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Creation time');
      t.timestamp('last_login_at', { useTz: true }).nullable().comment('Last successful authentication');
    });
    await knex.raw('create unique index accounts_lower_email_key on ??.accounts (lower_email) where lower_email is not null', [schema]);

    await knex.schema.withSchema(schema).createTable('access_tokens', (t) => {
      t.comment('Personal access tokens; only a hash of the secret is kept');
      t.bigIncrements('id').comment('Token id');
      t.bigInteger('uid').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE').comment('Owner account');
      t.string('name', 255).notNullable().comment('Name given by the owner; unique per owner');
      t.string('token_hash', 64).notNullable().unique().comment('SHA-256 of the token, hex');
      t.string('token_last_eight', 8).notNullable().comment('Last eight characters, for display');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Creation time');
      t.timestamp('last_used_at', { useTz: true }).nullable().comment('Last successful authentication with it');
      t.unique(['uid', 'name']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('access_tokens');
    await knex.schema.withSchema(schema).dropTable('accounts');
  },
};
