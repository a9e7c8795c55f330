import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** Every license issued, so a revoked or deleted contract's licenses can be put on the revocation list (docs/licensing.md). */
export const issuedLicenses: Migration = {
  name: '20261123020000_issued_licenses',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('issued_licenses', (t) => {
      t.comment('Licenses issued from contracts; kept after their contract is deleted, revoked then');
      t.string('serial', 20).primary().comment('Certificate serial, decimal: the license ID (a positive 63-bit integer)');
      // No foreign key: a deleted contract's licenses stay here, revoked, for the revocation list.
      t.bigInteger('contract_id').notNullable().comment('Contract it was issued from');
      t.bigInteger('contract_cluster_id').nullable().comment('Contract-cluster binding it was issued for');
      t.uuid('cluster_uid').notNullable().comment('Cluster UUID: CN and SAN DNS name');
      t.jsonb('features').notNullable().defaultTo('[]').comment('Licensed features, as in the certificate');
      t.string('issued_by', 64).notNullable().comment('Login of who asked for it');
      t.timestamp('issued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('NotBefore');
      t.timestamp('not_after', { useTz: true }).notNullable().comment('NotAfter: the contract end when issued');
      t.timestamp('revoked_at', { useTz: true }).nullable().comment('When its contract was revoked or deleted; null while valid');
      t.index(['contract_id'], 'issued_licenses_contract');
      t.index(['revoked_at'], 'issued_licenses_revoked');
    });
    await knex.schema.withSchema(schema).createTable('quota_alerts', (t) => {
      t.comment('Quota thresholds a contract has crossed: each recorded once (and an audit event with it)');
      t.bigInteger('contract_id').notNullable().references('id').inTable(`${schema}.contracts`).onDelete('CASCADE').comment('The contract');
      t.smallint('threshold').notNullable().comment('Percentage of the quota limit');
      t.timestamp('crossed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was first seen crossed');
      t.primary(['contract_id', 'threshold']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('quota_alerts');
    await knex.schema.withSchema(schema).dropTable('issued_licenses');
  },
};
