import { openObjectStorage } from '@platform/object-storage';
import { defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { contractsLicensingEnv, type ContractsLicensingConfig } from './config';
import { authorityFromConfig } from './licensing/authority';
import { Contracts } from './contracts/contracts';
import { clustersClient, clustersInventory } from './contracts/inventory';
import { contractsService } from './contracts/service';
import { contractsLicensingService } from './service';

/** Starts the contracts-licensing service: contracts, contract clusters, audit events and issued licenses */
export const contractsLicensingApp = defineApp({ name: 'contracts-licensing', env: contractsLicensingEnv, start: startContractsLicensing });

function startContractsLicensing(config: ContractsLicensingConfig) {
  const storage = openObjectStorage(config);
  const clusters = clustersClient(config.CLUSTERS_GRPC_ADDR);
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
        const contracts = new Contracts(db!, storage, clustersInventory(clusters), log);
        return [contractsLicensingService(), contractsService(contracts)];
      },
      onStop: async () => {
        clusters.close();
        storage.close();
      },
    },
    config,
  );
}
