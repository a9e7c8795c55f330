import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { tuples } from './20261122010000_tuples';

/** Every migration of the authz schema, oldest first. */
export const migrations: Migration[] = [init, tuples];
