export { billingDashboardApp, createBillingDashboardApp, type BillingDashboardDeps } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as billingDashboardMigrations } from '../migrations';
// For bench/usage-reports.ts: the rows ingestion writes for a usage sample, its rollup statement, and the quantities' SQL.
export { sampleRows } from './ingestion/ingestion';
export { rollUpSamples, rollUpSamplesByMonth, toSampleColumns } from './ingestion/ingestion-store';
export { keepAllPoints } from './usage/daily-series';
export { QUANTITY, SAMPLE_HOURS } from './usage/quantities';
