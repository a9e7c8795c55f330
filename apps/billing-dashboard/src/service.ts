import { billingDashboardV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';

/** The BillingDashboardService binding: one line per RPC of proto/platform/billingdashboard/v1/, handing it to its feature. */
export function billingDashboardService(): ServiceBinding<typeof billingDashboardV1.BillingDashboardServiceService> {
  return bindService(billingDashboardV1.BillingDashboardServiceService, {
    getVersion: async () => versionOf('billing-dashboard'),
  });
}
