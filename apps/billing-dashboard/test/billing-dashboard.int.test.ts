import { billingDashboardV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { billingDashboardApp } from '../src/app';

describeServiceContract({
  app: billingDashboardApp,
  schema: 'billing',
  grpcService: 'platformadmin.billingdashboard.v1.BillingDashboardService',
  definition: billingDashboardV1.BillingDashboardServiceService,
});
