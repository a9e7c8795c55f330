export { billingDashboardApp, createBillingDashboardApp, type BillingDashboardDeps } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as billingDashboardMigrations } from '../migrations';
