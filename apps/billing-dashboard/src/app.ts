import { billingDashboardV1 } from '@platform/proto';
import { bindService, defineApp, serviceEnv, startService, versionOf } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the billing-dashboard service: licensed usage, system outages and usage reports */
export const billingDashboardApp = defineApp({
  name: 'billing-dashboard',
  env: serviceEnv,
  start: (config) =>
    startService(
      {
        name: 'billing-dashboard',
        protoPackage: 'billingdashboard',
        database: { schema: 'billing', migrations },
        // Publishes and consumes events (docs/architecture.md); readiness follows the bus connection.
        bus: true,
        grpc: () => [
          bindService(billingDashboardV1.BillingDashboardServiceService, { getVersion: async () => versionOf('billing-dashboard') }),
        ],
      },
      config,
    ),
});
