import { clustersV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { startClusters } from '../src/app';

describeServiceContract({
  app: 'clusters',
  schema: 'clusters',
  grpcService: 'platform.clusters.v1.ClustersService',
  definition: clustersV1.ClustersServiceService,
  start: startClusters,
});
