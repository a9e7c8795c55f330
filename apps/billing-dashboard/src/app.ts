import { billingDashboardV1 } from '@platform/proto';
import { bindService, startService, versionOf, type RunningService, type ServiceConfig } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the billing-dashboard service: licensed usage, system outages and usage reports */
export function startBillingDashboard(config: ServiceConfig): Promise<RunningService> {
  return startService(
    {
      name: 'billing-dashboard',
      protoPackage: 'billingdashboard',
      database: { schema: 'billing', migrations },
      grpc: () => [bindService(billingDashboardV1.BillingDashboardServiceService, { getVersion: async () => versionOf('billing-dashboard') })],
    },
    config,
  );
}
