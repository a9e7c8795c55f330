import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Each recipient's notice mail is a durable delivery of its own (docs/notifications.md): queued pending with the
 * notice's webhook deliveries, attempted by lease, retried with backoff and in the delivery log as they are, so no
 * channel waits for another. Mails already sent or kept stay as they were.
 */
export const mailDeliveries: Migration = {
  name: '20261222000000_mail_deliveries',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('notice_mails', (t) => {
      t.string('status', 16)
        .notNullable()
        .comment("'pending' (queued, retried with backoff), 'sent', 'kept' (no SMTP set) or 'failed' (given up)")
        .alter();
      t.integer('attempts').notNullable().defaultTo(0).comment('Attempts so far (failed ones, and the one that sent it)');
      t.text('last_error').notNullable().defaultTo('').comment("The last attempt's error (the SMTP server's answer, never the mail)");
      t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When a pending mail is next due');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.index(['status', 'next_attempt_at']);
    });
    // The mails of before were sent or kept at once: one attempt each, last touched when made.
    await knex.withSchema(schema).table('notice_mails').update({ attempts: 1, updated_at: knex.ref('created_at') });
  },
  async down(knex: Knex, schema: string) {
    // Mails not sent (pending or given up) had no place in the table of before, which held only sent or kept ones.
    await knex.withSchema(schema).table('notice_mails').whereNotIn('status', ['sent', 'kept']).delete();
    await knex.schema.withSchema(schema).alterTable('notice_mails', (t) => {
      t.dropIndex(['status', 'next_attempt_at']);
      t.dropColumns('attempts', 'last_error', 'next_attempt_at', 'updated_at');
      t.string('status', 16).notNullable().comment("'sent' or 'kept'").alter();
    });
  },
};
