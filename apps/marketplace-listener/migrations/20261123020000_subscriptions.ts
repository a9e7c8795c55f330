import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Installers, subscriptions, the notifications already answered (so a redelivery answers as the first did)
 * and the audit log of every notification (docs/marketplaces.md).
 */
export const subscriptions: Migration = {
  name: '20261123020000_subscriptions',
  async up(knex: Knex, schema: string) {
    // A fresh builder per table: one builder runs every statement it was given each time it is awaited.
    const s = () => knex.schema.withSchema(schema);
    await s().createTable('installers', (t) => {
      t.comment('What a marketplace buyer deploys; its archive is rendered from the binding info once bound');
      t.string('id', 64).primary().comment('Installer ID named by the binding info of a notification');
      t.string('marketplace', 16).notNullable().comment('ProviderA, ProviderB or ProviderC');
      t.jsonb('options').notNullable().defaultTo('{}').comment('Options the installer was prepared with (product, plan, chart values)');
      t.string('created_by', 64).notNullable().defaultTo('').comment('Login of the site admin who created it');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was created');
      t.string('subscription_id', 255).nullable().comment('Subscription it is bound to; null while unbound (bound once, never rebound)');
      t.timestamp('bound_at', { useTz: true }).nullable().comment('When it was bound');
      t.jsonb('binding')
        .nullable()
        .comment(
          'Binding info it was bound with: cluster ID, admin user, domain whitelist, options, and the admin password only as a scrypt hash',
        );
      t.index(['marketplace', 'created_at']);
    });
    await s().createTable('subscriptions', (t) => {
      t.comment('Marketplace subscriptions (Subscription and its states)');
      t.string('marketplace', 16).notNullable().comment('ProviderA, ProviderB or ProviderC');
      t.string('subscription_id', 255).notNullable().comment("The marketplace's subscription ID");
      t.bigInteger('subscriber_id').nullable().comment('The standalone organization made for the subscriber; null until bound');
      t.bigInteger('requester_id')
        .nullable()
        .comment('The account that created that organization on the marketplace’s behalf (the platform admin)');
      t.string('bounded_installer_id', 64).nullable().comment('The installer bound to it');
      t.string('state', 16).notNullable().comment('Pending, Bounded, Running, Failed, Deleting, DeletionFailed, Deleted or Revoked');
      t.boolean('is_revocable').notNullable().defaultTo(true).comment('Whether a site admin may revoke it (and its contracts)');
      t.integer('no_of_billing_event_sent').notNullable().defaultTo(0).comment('Metered-billing events reported for it');
      t.uuid('claim_id').nullable().comment("The subscriber organization's claim (orgs-teams)");
      t.jsonb('contract_ids').notNullable().defaultTo('[]').comment('Contracts made for the subscriber (contracts-licensing)');
      t.jsonb('billing_details').notNullable().defaultTo('{}').comment('Per-provider billing detail (never a secret)');
      t.timestamp('last_event_at', { useTz: true })
        .nullable()
        .comment('Time of the newest notification applied; older ones change nothing');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('createdAt');
      t.timestamp('last_updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('lastUpdatedAt');
      t.primary(['marketplace', 'subscription_id']);
      t.index(['last_updated_at']);
    });
    await s().createTable('notifications', (t) => {
      t.comment('Notifications already answered, so a redelivery (same subscription, event and time) answers as the first did');
      t.bigIncrements('id').comment('Row id');
      t.string('marketplace', 16).notNullable().comment('ProviderA, ProviderB or ProviderC');
      t.string('subscription_id', 255).notNullable().comment('The subscription it concerned');
      t.string('event_type', 64).notNullable().comment('Its event type ("" when it named none)');
      t.string('event_key', 128).notNullable().comment('Its event time, or a digest of its body when it had none');
      t.jsonb('answer').notNullable().comment('What it was answered: {status, installerId?}');
      t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was first received');
      t.unique(['marketplace', 'subscription_id', 'event_type', 'event_key']);
    });
    await s().createTable('audit_events', (t) => {
      t.comment('MarketplaceAuditEvent: every authenticated notification, accepted or refused, without secrets');
      t.bigIncrements('id').comment('Row id');
      t.string('marketplace', 16).notNullable().comment('ProviderA, ProviderB or ProviderC');
      t.string('subscription_id', 255).notNullable().comment('The subscription it concerned; "" when none could be read');
      t.string('status', 16).notNullable().comment('Succeeded, Replayed, Ignored or Failed');
      t.string('operation_type', 64).notNullable().comment('The notification event type, e.g. BIND, PUT, DELETE');
      t.text('description').notNullable().comment('What happened, or why it was refused');
      t.jsonb('data').notNullable().comment('The notification with its secrets removed, and the HTTP status answered');
      t.timestamp('timestamp', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('When it was received');
      t.index(['marketplace', 'subscription_id', 'timestamp']);
      t.index(['timestamp']);
    });
  },
  async down(knex: Knex, schema: string) {
    for (const table of ['audit_events', 'notifications', 'subscriptions', 'installers'])
      await knex.schema.withSchema(schema).dropTable(table);
  },
};
