export { startBillingDashboard } from './app';
