import { addressVar, authzClientEnv, serviceEnv, type ConfigOf } from '@platform/service-kit';

/**
 * clusters settings: the common ones, where authz is (the owner tuples of clusters) and where orgs-teams is
 * (the bus accounts agent reports are verified against).
 */
export const clustersEnv = { ...serviceEnv, ...authzClientEnv, ORGS_TEAMS_GRPC_ADDR: addressVar.default('127.0.0.1:50053') };
export type ClustersConfig = ConfigOf<typeof clustersEnv>;
