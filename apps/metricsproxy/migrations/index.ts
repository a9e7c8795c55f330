import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { backends } from './20261123000000_backends';

/** Every migration of the metricsproxy schema, oldest first. */
export const migrations: Migration[] = [init, backends];
