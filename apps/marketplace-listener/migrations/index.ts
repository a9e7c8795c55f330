import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';

/** Every migration of the marketplace schema, oldest first. */
export const migrations: Migration[] = [init];
