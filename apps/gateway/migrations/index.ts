import type { Migration } from '@platform/db';
import { signInFailures } from './20261124000000_sign_in_failures';

/**
 * Every migration of the gateway schema, oldest first. Applied only when the gateway runs with DATABASE_URL: the
 * embedded platform counts sign-in failures in memory (docs/decisions.md D36).
 */
export const migrations: Migration[] = [signInFailures];
