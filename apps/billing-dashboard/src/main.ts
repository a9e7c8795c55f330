import { loadConfig, runMain, serviceEnv } from '@platform/service-kit';
import { startBillingDashboard } from './app';

runMain('billing-dashboard', () => loadConfig(serviceEnv), startBillingDashboard);
