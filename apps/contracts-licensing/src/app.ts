import { defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { contractsLicensingEnv, type ContractsLicensingConfig } from './config';
import { authorityFromConfig } from './licensing/authority';
import { contractsLicensingService } from './service';

/** Starts the contracts-licensing service: contracts, contract clusters, audit events and issued licenses */
export const contractsLicensingApp = defineApp({ name: 'contracts-licensing', env: contractsLicensingEnv, start: startContractsLicensing });

function startContractsLicensing(config: ContractsLicensingConfig) {
  return startService(
    {
      name: 'contracts-licensing',
      protoPackage: 'contractslicensing',
      database: { schema: 'contracts', migrations },
      // Publishes and consumes events (docs/architecture.md); readiness follows the bus connection.
      bus: true,
      grpc: async ({ db, log }) => {
        // The platform CA exists from the first start on (docs/licensing.md), before any license is asked for.
        await authorityFromConfig(db!, config, () => log.info('generated the platform license CA'));
        return [contractsLicensingService()];
      },
    },
    config,
  );
}
