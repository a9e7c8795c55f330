import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** The licenses registered at POST /register, with their cluster and holder (docs/licensing.md). */
export const licenseRegistrations: Migration = {
  name: '20261201010000_license_registrations',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('license_registrations', (t) => {
      t.comment('Licenses registered by their clusters: one row per license, however often it registers');
      // No foreign key: like issued_licenses, kept when the contract goes.
      t.string('serial', 20).primary().comment('The license ID (issued_licenses.serial)');
      t.uuid('cluster_uid').notNullable().comment('The cluster it registered for (the license’s SAN)');
      t.string('holder_email', 254).notNullable().comment('The license holder: its SAN email');
      t.bigInteger('holder_id').notNullable().defaultTo(0).comment('The holder’s user account (orgs-teams id); 0 when none');
      t.string('holder_login', 64).notNullable().defaultTo('').comment('That account’s login when registered; empty when none');
      t.timestamp('first_registered_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('First registration');
      t.timestamp('last_registered_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Latest registration');
      t.index(['last_registered_at'], 'license_registrations_latest');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('license_registrations');
  },
};
