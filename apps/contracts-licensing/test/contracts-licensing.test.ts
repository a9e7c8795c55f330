import { contractsLicensingV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { startContractsLicensing } from '../src/app';

describeServiceContract({
  app: 'contracts-licensing',
  schema: 'contracts',
  grpcService: 'platform.contractslicensing.v1.ContractsLicensingService',
  definition: contractsLicensingV1.ContractsLicensingServiceService,
  start: startContractsLicensing,
});
