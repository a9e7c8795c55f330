import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** The platform CA that signs licenses and revocation lists: one row, its private key sealed. */
export const licenseAuthority: Migration = {
  name: '20261123000000_license_authority',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('license_authority', (t) => {
      t.comment('The platform license CA generated on first start (unused when LICENSE_CA_CERT/LICENSE_CA_KEY are set); one row');
      t.smallint('id').primary().comment('Always 1: there is one platform CA, and the key makes a second insert conflict');
      t.text('certificate_pem').notNullable().comment('Self-signed CA certificate (PEM), public');
      t.text('sealed_private_key')
        .notNullable()
        .comment('PKCS#8 private key, sealed with SECRETS_ENCRYPTION_KEY (AES-256-GCM, v1.<iv>.<tag>.<data>)');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was generated');
    });
    await knex.raw('alter table ??.license_authority add constraint license_authority_one_row check (id = 1)', [schema]);
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('license_authority');
  },
};
