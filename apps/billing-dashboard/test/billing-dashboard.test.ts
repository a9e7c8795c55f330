import { billingDashboardV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { startBillingDashboard } from '../src/app';

describeServiceContract({
  app: 'billing-dashboard',
  schema: 'billing',
  grpcService: 'platform.billingdashboard.v1.BillingDashboardService',
  definition: billingDashboardV1.BillingDashboardServiceService,
  start: startBillingDashboard,
});
