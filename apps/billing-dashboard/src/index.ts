export { billingDashboardApp } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as billingDashboardMigrations } from '../migrations';
