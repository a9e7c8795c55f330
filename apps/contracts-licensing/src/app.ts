import { contractsLicensingV1 } from '@platform/proto';
import { bindService, startService, versionOf, type RunningService, type ServiceConfig } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the contracts-licensing service: contracts, contract clusters, audit events and issued licenses */
export function startContractsLicensing(config: ServiceConfig): Promise<RunningService> {
  return startService(
    {
      name: 'contracts-licensing',
      protoPackage: 'contractslicensing',
      database: { schema: 'contracts', migrations },
      grpc: () => [bindService(contractsLicensingV1.ContractsLicensingServiceService, { getVersion: async () => versionOf('contracts-licensing') })],
    },
    config,
  );
}
