import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { accounts } from './20261122010000_accounts';

/** Every migration of the identity schema, oldest first. */
export const migrations: Migration[] = [init, accounts];
