import { z } from 'zod';
import { ConfigError, serviceEnv, type ConfigOf } from '@platform/service-kit';
import { DEFAULT_CACHE_TUPLES, DEFAULT_MAX_TUPLES } from './engine/memory-tuples';

/** authz settings: the common ones and, optionally, an OpenFGA server (else the embedded engine). */
export const authzEnv = {
  ...serviceEnv,
  OPENFGA_API_URL: z.url().optional(),
  OPENFGA_STORE_ID: z
    .string()
    .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an OpenFGA store id (ULID)')
    .optional(),
  OPENFGA_API_TOKEN: z.string().optional(),
  /** Most custom roles one team may be assigned (a team's assignedRoleIDs, a role's teamIDs). */
  MAX_ROLES_PER_TEAM: z.coerce.number().int().min(1).max(1000).default(10),
  /**
   * Most tuples the embedded engine holds in memory; with more in the table, checks read it through a cache of at
   * most AUTHZ_TUPLE_CACHE_MAX tuples (docs/limits.md, "authz at scale").
   */
  AUTHZ_MEMORY_TUPLES_MAX: z.coerce.number().int().min(0).max(100_000_000).default(DEFAULT_MAX_TUPLES),
  AUTHZ_TUPLE_CACHE_MAX: z.coerce.number().int().min(0).max(10_000_000).default(DEFAULT_CACHE_TUPLES),
};
export type AuthzConfig = ConfigOf<typeof authzEnv>;

/** The OpenFGA variables go together: a URL without a store cannot work. */
export function assertOpenFgaSettings(config: AuthzConfig): void {
  if (config.OPENFGA_API_URL && !config.OPENFGA_STORE_ID)
    throw new ConfigError([
      'OPENFGA_STORE_ID: required when OPENFGA_API_URL is set; set it to the id of the store holding the platform’s model, ' +
        'or unset OPENFGA_API_URL to use the embedded engine',
    ]);
}
