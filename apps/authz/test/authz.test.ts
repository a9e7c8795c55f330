import { authzV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { startAuthz } from '../src/app';

describeServiceContract({
  app: 'authz',
  schema: 'authz',
  grpcService: 'platform.authz.v1.AuthzService',
  definition: authzV1.AuthzServiceService,
  start: startAuthz,
});
