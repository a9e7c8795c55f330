import { authzV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { authzApp } from '../src/app';

describeServiceContract({
  app: authzApp,
  schema: 'authz',
  grpcService: 'platformadmin.authz.v1.AuthzService',
  definition: authzV1.AuthzServiceService,
});
