import type { Database } from '@platform/db';
import { billingDashboardV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import { usageOf } from './usage/usage';

/** The BillingDashboardService binding: one line per RPC of proto/platformadmin/billingdashboard/v1/, handing it to its feature. */
export function billingDashboardService(db: Database): ServiceBinding<typeof billingDashboardV1.BillingDashboardServiceService> {
  return bindService(billingDashboardV1.BillingDashboardServiceService, {
    getVersion: async () => versionOf('billing-dashboard'),
    getUsage: (req) => usageOf(db, req),
  });
}
