import { contractsLicensingV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { contractsLicensingApp } from '../src/app';

describeServiceContract({
  app: contractsLicensingApp,
  schema: 'contracts',
  grpcService: 'platformadmin.contractslicensing.v1.ContractsLicensingService',
  definition: contractsLicensingV1.ContractsLicensingServiceService,
});
