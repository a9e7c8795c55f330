import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** Site settings (branding, allowed email domains, registration toggle) and organization avatars. */
export const siteSettings: Migration = {
  name: '20261122030000_site_settings',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('site_settings', (t) => {
      t.comment('The site-wide settings: exactly one row (id 1); a null option means the built-in default');
      t.smallint('id').primary().comment('Always 1: the table holds one row');
      t.string('app_name', 64).nullable().comment('Branding: application name; null for the default');
      t.string('primary_color', 7).nullable().comment('Branding: primary color as #rgb or #rrggbb; null for the default');
      t.boolean('show_app_tag').nullable().comment('Branding: whether the app tag is shown; null for the default (false)');
      t.text('logo').nullable().comment('Branding: logo as a base64 image data URI; null for the default logo');
      t.text('favicon').nullable().comment('Branding: favicon as a base64 image data URI; null for the default favicon');
      t.boolean('disable_registration').notNullable().defaultTo(false).comment('Whether new-user registration is disabled');
      t.bigInteger('updated_by').nullable().comment('Account that last changed a setting (no foreign key: the account may go)');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Last change of any setting');
    });
    await knex.raw('alter table ??.site_settings add constraint site_settings_single_row check (id = 1)', [schema]);
    await knex.withSchema(schema).table('site_settings').insert({ id: 1 });

    await knex.schema.withSchema(schema).createTable('allowed_domains', (t) => {
      t.comment('Email domains whitelisted for registration; an empty table means no whitelist');
      t.string('name', 253).primary().comment('Lower-cased domain name, e.g. example.com');
      t.bigInteger('created_by').nullable().comment('Account that added the domain');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the domain was added');
    });

    await knex.schema.withSchema(schema).createTable('org_avatars', (t) => {
      t.comment('Organization avatars other than the generated default; no row means the default identicon');
      t.bigInteger('org_id')
        .primary()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('The organization account');
      t.string('source', 8).notNullable().comment('local (uploaded image in object storage) or lookup (Gravatar/Libravatar)');
      t.string('object_key', 512).nullable().comment('local: object-storage key of the image (content-addressed)');
      t.string('content_type', 32).nullable().comment('local: image/png, image/jpeg, image/gif or image/webp');
      t.integer('size_bytes').nullable().comment('local: size of the image in bytes');
      t.string('email', 255).nullable().comment('lookup: the email address looked up');
      t.boolean('federavatar').notNullable().defaultTo(false).comment('lookup: through Libravatar (federated) instead of Gravatar');
      t.bigInteger('updated_by').nullable().comment('Account that last changed the avatar');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When the avatar last changed');
    });
    await knex.raw(
      `alter table ??.org_avatars add constraint org_avatars_source check (
         (source = 'local' and object_key is not null and content_type is not null and size_bytes is not null)
         or (source = 'lookup' and email is not null))`,
      [schema],
    );
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('org_avatars');
    await knex.schema.withSchema(schema).dropTable('allowed_domains');
    await knex.schema.withSchema(schema).dropTable('site_settings');
  },
};
