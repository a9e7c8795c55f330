import { addressVar, authzClientEnv, serviceEnv, type ConfigOf } from '@platform/service-kit';
import { z } from 'zod';

/**
 * clusters settings: the common ones, where authz is (the owner tuples of clusters) and where orgs-teams is
 * (the bus accounts agent reports are verified against).
 */
export const clustersEnv = {
  ...serviceEnv,
  ...authzClientEnv,
  ORGS_TEAMS_GRPC_ADDR: addressVar.default('127.0.0.1:50053'),
  /** How often the asynchronous cleanup of client-org removals and deletions runs (docs/client-organizations.md). */
  CLIENT_ORG_CLEANUP_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(2_000),
  /** How often connections of users no longer owners are taken back (team auto-connect, docs/organizations-and-teams.md). */
  CONNECTION_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
};
export type ClustersConfig = ConfigOf<typeof clustersEnv>;
