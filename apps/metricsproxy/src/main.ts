import { runMain } from '@platform/service-kit';
import { metricsproxyApp } from './app';

runMain(metricsproxyApp);
