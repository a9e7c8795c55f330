import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * What a site admin may set of a user beyond its sign-in (Gitea's EditUserOption: its sign-in name, whether it may
 * create organizations) and the user's own settings (Gitea's UserSettings); docs/authentication.md.
 */
export const userSettings: Migration = {
  name: '20261201010000_user_settings',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.string('login_name', 255).notNullable().defaultTo('').comment("Name at the user's authentication source; empty for local accounts");
      t.boolean('allow_create_organization').notNullable().defaultTo(true).comment('Whether the user may create organizations');
      t.string('theme', 64).notNullable().defaultTo('').comment("The user's UI theme");
      t.string('diff_view_style', 16).notNullable().defaultTo('').comment("The user's diff view style (unified, split)");
      t.boolean('hide_email').notNullable().defaultTo(false).comment('The user asks that its email be hidden');
      t.boolean('hide_activity').notNullable().defaultTo(false).comment('The user asks that its activity be hidden');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      for (const c of ['hide_activity', 'hide_email', 'diff_view_style', 'theme', 'allow_create_organization', 'login_name']) t.dropColumn(c);
    });
  },
};
