export {
  billingDashboardClients,
  keptBilling,
  BILLING_READS,
  type BillingDashboardClients,
  type BillingDashboardKeeping,
} from './clients';
