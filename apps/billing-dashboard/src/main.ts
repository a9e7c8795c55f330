import { runMain } from '@platform/service-kit';
import { billingDashboardApp } from './app';

runMain(billingDashboardApp);
