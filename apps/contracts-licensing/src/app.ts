import { openObjectStorage } from '@platform/object-storage';
import { defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { contractsLicensingEnv, type ContractsLicensingConfig } from './config';
import { authorityFromConfig } from './licensing/authority';
import { createContracts } from './contracts/contracts';
import { clustersClient, clustersInventory } from './contracts/inventory';
import { contractsService } from './contracts/service';
import { Licenses } from './licenses/licenses';
import { billingClient, billingUsage } from './licenses/quota';
import { startLicenseMetrics } from './licenses/license-metrics';
import { licensingService } from './licenses/service';
import { contractsLicensingService } from './service';

/** Starts the contracts-licensing service: contracts, contract clusters, audit events and issued licenses */
export const contractsLicensingApp = defineApp({ name: 'contracts-licensing', env: contractsLicensingEnv, start: startContractsLicensing });

function startContractsLicensing(config: ContractsLicensingConfig) {
  const storage = openObjectStorage(config);
  const clusters = clustersClient(config.CLUSTERS_GRPC_ADDR);
  const billing = billingClient(config.BILLING_DASHBOARD_GRPC_ADDR);
  let stopMetrics: (() => void) | undefined;
  return startService(
    {
      name: 'contracts-licensing',
      protoPackage: 'contractslicensing',
      database: { schema: 'contracts', migrations },
      // Publishes and consumes events (docs/architecture.md); readiness follows the bus connection.
      bus: true,
      grpc: async ({ db, log }) => {
        // The platform CA exists from the first start on (docs/licensing.md), before any license is asked for.
        const authority = await authorityFromConfig(db!, config, () => log.info('generated the platform license CA'));
        const inventory = clustersInventory(clusters);
        const contracts = createContracts(db!, storage, inventory, log);
        const licenses = new Licenses(db!, authority, contracts, inventory, billingUsage(billing), log);
        stopMetrics = startLicenseMetrics(db!, log, config.LICENSE_METRICS_INTERVAL_MS);
        return [contractsLicensingService(), contractsService(contracts), licensingService(licenses, authority.certificatePem)];
      },
      onStop: async () => {
        stopMetrics?.();
        clusters.close();
        billing.close();
        storage.close();
      },
    },
    config,
  );
}
