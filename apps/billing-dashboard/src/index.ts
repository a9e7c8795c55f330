export { billingDashboardApp, createBillingDashboardApp, type BillingDashboardDeps } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as billingDashboardMigrations } from '../migrations';
// For bench/usage-reports.ts: the rows ingestion writes for a usage sample.
export { sampleRows } from './ingestion/ingestion';
export { toSampleColumns } from './ingestion/ingestion-store';
