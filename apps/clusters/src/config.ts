import { authzClientEnv, serviceEnv, type ConfigOf } from '@platform/service-kit';

/** clusters settings: the common ones and where authz is (the owner tuples of clusters). */
export const clustersEnv = { ...serviceEnv, ...authzClientEnv };
export type ClustersConfig = ConfigOf<typeof clustersEnv>;
