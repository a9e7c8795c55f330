import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Agent-protocol ingestion (docs/agent-protocol.md): the message ids already applied, so a redelivered or
 * replayed report has the effect of one, and the observation time of the last inventory snapshot applied to
 * a cluster, so an older snapshot is ignored.
 */
export const agentIngestion: Migration = {
  name: '20261122030000_agent_ingestion',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('agent_seen_messages', (t) => {
      t.comment('Agent messages already applied (their id committed with their effect); kept longer than the AGENT stream max age');
      t.uuid('message_id').primary().comment('Envelope.message_id');
      t.uuid('cluster_uid').notNullable().comment('Envelope.cluster_uid: the cluster the message is about');
      t.text('kind').notNullable().comment('Kind token, e.g. inventory');
      t.timestamp('seen_at', { useTz: true })
        .notNullable()
        .defaultTo(knex.fn.now())
        .comment('When it was applied; retention deletes by it');
      t.index(['seen_at'], 'agent_seen_messages_seen_at');
    });
    await knex.schema.withSchema(schema).alterTable('clusters', (t) => {
      t.timestamp('observed_at', { useTz: true })
        .nullable()
        .comment('observed_at of the last inventory snapshot applied to the cluster; null before any; an older snapshot is ignored');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('clusters', (t) => {
      t.dropColumn('observed_at');
    });
    await knex.schema.withSchema(schema).dropTable('agent_seen_messages');
  },
};
