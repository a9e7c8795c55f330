export {
  BILLING_DASHBOARD_KEPT,
  billingDashboardClients,
  keptBilling,
  BILLING_READS,
  type BillingDashboardClients,
  type BillingDashboardKeeping,
  BILLING_DASHBOARD_SERVICES,
} from './clients';
