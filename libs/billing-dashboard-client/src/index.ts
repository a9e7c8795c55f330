export {
  BILLING_DASHBOARD_KEPT,
  billingDashboardClients,
  keptBilling,
  BILLING_READS,
  type BillingDashboardClients,
  type BillingDashboardKeeping,
} from './clients';
