import { contractsLicensingV1 } from '@platform/proto';
import { bindService, defineApp, serviceEnv, startService, versionOf } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the contracts-licensing service: contracts, contract clusters, audit events and issued licenses */
export const contractsLicensingApp = defineApp({
  name: 'contracts-licensing',
  env: serviceEnv,
  start: (config) =>
    startService(
      {
        name: 'contracts-licensing',
        protoPackage: 'contractslicensing',
        database: { schema: 'contracts', migrations },
        // Publishes and consumes events (docs/architecture.md); readiness follows the bus connection.
        bus: true,
        grpc: () => [
          bindService(contractsLicensingV1.ContractsLicensingServiceService, { getVersion: async () => versionOf('contracts-licensing') }),
        ],
      },
      config,
    ),
});
