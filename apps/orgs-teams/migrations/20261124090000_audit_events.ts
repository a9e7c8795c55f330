import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * The audit trail of administrative changes (docs/audit.md): one row per successful change made through the API,
 * recorded by the gateway, listed by site admins newest first and filtered by actor, action, target and time.
 */
export const auditEvents: Migration = {
  name: '20261124090000_audit_events',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('audit_events', (t) => {
      t.comment('Administrative changes made through the API: who did what to which path, when, from where');
      t.uuid('id').primary().comment('Chosen by the recorder, so a retried delivery is stored once');
      t.timestamp('at', { useTz: true }).notNullable().comment('When the change was answered');
      t.bigInteger('actor_id').notNullable().comment('Account id of the caller');
      t.string('actor_login', 64).notNullable().comment('Login of the caller at the time');
      t.string('action', 64).notNullable().comment('The API operation, e.g. orgCreate');
      t.string('method', 8).notNullable().comment('HTTP method');
      t.string('route', 255).notNullable().comment('The route pattern, e.g. /orgs/{orgname}');
      t.string('target', 1024).notNullable().comment('The path changed, as requested');
      t.string('org', 64).notNullable().defaultTo('').comment('The ?org= context, empty when none');
      t.integer('status').notNullable().comment('HTTP status of the answer');
      t.string('request_id', 128).notNullable().comment('X-Request-Id of the request');
      t.string('client', 64).notNullable().defaultTo('').comment('Client address as the gateway saw it');
      t.index(['at', 'id'], 'audit_events_at_idx');
      t.index(['actor_login', 'at'], 'audit_events_actor_idx');
      t.index(['action', 'at'], 'audit_events_action_idx');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('audit_events');
  },
};
