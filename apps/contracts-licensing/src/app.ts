import { defineApp, serviceEnv, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { contractsLicensingService } from './service';

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
        grpc: () => [contractsLicensingService()],
      },
      config,
    ),
});
