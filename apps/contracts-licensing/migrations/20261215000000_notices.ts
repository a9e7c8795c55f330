import type { Knex } from 'knex';
import { outboxMigration, type Migration } from '@platform/db';

/** The outbox the notices stage their sends in (docs/notifications.md). */
export const noticesOutbox: Migration = outboxMigration('20261215000000_outbox');

/** Notices (quota thresholds, license expiry), the mails they sent or kept, webhook endpoints and their deliveries. */
export const notices: Migration = {
  name: '20261215000001_notices',
  async up(knex: Knex, schema: string) {
    // A fresh builder per table: one builder re-runs the statements queued before.
    const s = () => knex.schema.withSchema(schema);
    await s().createTable('notices', (t) => {
      t.comment(
        'Notices decided: one per contract, contract period, kind and mark, so a redelivered report or a second sweep decides nothing new',
      );
      t.bigIncrements('id');
      t.bigInteger('contract_id').notNullable().comment('The contract (no foreign key: the log outlives a deleted contract)');
      t.timestamp('period_start', { useTz: true }).notNullable().comment('The contract period the notice belongs to (its start)');
      t.string('kind', 32).notNullable().comment("'quota.threshold' or 'contract.expiring'");
      t.integer('mark').notNullable().comment('The threshold in percent, or the days before the end');
      t.boolean('sent').notNullable().comment('false: recorded as passed but superseded by a higher mark decided at the same time');
      t.jsonb('detail').notNullable().comment('What the messages say: contract name, product, metric, used, limit, end');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.unique(['contract_id', 'period_start', 'kind', 'mark']);
      t.index(['created_at']);
    });
    await s().createTable('notice_mails', (t) => {
      t.comment('One mail of a notice to one recipient: sent over SMTP, or kept when no SMTP is set');
      t.bigIncrements('id');
      t.bigInteger('notice_id').nullable().comment('The notice; null for a mail about a webhook endpoint');
      t.bigInteger('owner_id').notNullable().comment('The account the mail concerns (contract owner), 0 for the site');
      t.string('recipient', 254).notNullable();
      t.string('subject', 300).notNullable();
      t.string('status', 16).notNullable().comment("'sent' or 'kept'");
      t.text('text').notNullable().comment('Plain-text body');
      t.text('html').notNullable().comment('HTML body');
      t.string('dedupe_key', 200).notNullable().unique().comment('notice id and recipient: a retried send skips who already got it');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.index(['created_at']);
    });
    await s().createTable('webhook_endpoints', (t) => {
      t.comment('HTTPS endpoints registered by site admins (owner 0: every contract) and organization owners (their contracts)');
      t.bigIncrements('id');
      t.bigInteger('owner_id').notNullable().comment('0: the site; else the organization whose contracts it hears about');
      t.string('url', 2048).notNullable();
      t.jsonb('events').notNullable().comment('The event kinds it receives');
      t.text('secret_sealed').notNullable().comment('The signing secret, sealed with SECRETS_ENCRYPTION_KEY');
      t.string('created_by', 64).notNullable();
      t.string('notify_email', 254).notNullable().comment('Told when the endpoint is disabled');
      t.boolean('enabled').notNullable().defaultTo(true);
      t.integer('failures_in_row').notNullable().defaultTo(0).comment('Failed attempts since the last success');
      t.text('disabled_reason').notNullable().defaultTo('');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.index(['owner_id']);
    });
    await s().createTable('webhook_deliveries', (t) => {
      t.comment('Deliveries of notices to webhook endpoints, retried with backoff: the delivery log');
      t.bigIncrements('id');
      t.bigInteger('endpoint_id').notNullable().references('id').inTable(`${schema}.webhook_endpoints`).onDelete('CASCADE');
      t.bigInteger('notice_id').notNullable();
      t.string('event', 32).notNullable();
      t.text('body').notNullable().comment('The JSON body, signed as sent');
      t.string('status', 16).notNullable().comment("'pending', 'delivered' or 'failed' (given up)");
      t.integer('attempts').notNullable().defaultTo(0);
      t.integer('response_code').notNullable().defaultTo(0).comment('The last HTTP status; 0 when none came back');
      t.text('last_error').notNullable().defaultTo('');
      t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.unique(['endpoint_id', 'notice_id']);
      t.index(['status', 'next_attempt_at']);
    });
  },
  async down(knex: Knex, schema: string) {
    for (const table of ['webhook_deliveries', 'webhook_endpoints', 'notice_mails', 'notices'])
      await knex.schema.withSchema(schema).dropTable(table);
  },
};
