import { z } from 'zod';
import { authzClientEnv, serviceEnv, type ConfigOf } from '@platform/service-kit';

/** orgs-teams settings: the common ones, where authz is, and the first site admin. */
export const orgsTeamsEnv = {
  ...serviceEnv,
  ...authzClientEnv,
  PLATFORM_ADMIN_USERNAME: z.string().default('admin'),
  PLATFORM_ADMIN_EMAIL: z.string().default('admin@platform.local'),
  /** When unset on first start, a random password is generated and printed once. */
  PLATFORM_ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
};
export type OrgsTeamsConfig = ConfigOf<typeof orgsTeamsEnv>;
