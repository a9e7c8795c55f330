export { billingDashboardApp } from './app';
