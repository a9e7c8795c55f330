import { loadConfig, runMain, serviceEnv } from '@platform/service-kit';
import { startMetricsproxy } from './app';

runMain('metricsproxy', () => loadConfig(serviceEnv), startMetricsproxy);
