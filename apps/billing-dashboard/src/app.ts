import { defineApp, serviceEnv, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { billingDashboardService } from './service';

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
        grpc: () => [billingDashboardService()],
      },
      config,
    ),
});
