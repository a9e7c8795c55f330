import { clustersV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { clustersApp } from '../src/app';

describeServiceContract({
  app: clustersApp,
  schema: 'clusters',
  grpcService: 'platformadmin.clusters.v1.ClustersService',
  definition: clustersV1.ClustersServiceService,
});
