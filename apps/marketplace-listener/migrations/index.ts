import { outboxMigration, type Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { subscriptions } from './20261123020000_subscriptions';

/** Every migration of the marketplace schema, oldest first. */
export const migrations: Migration[] = [init, subscriptions, outboxMigration('20261123030000_outbox')];
