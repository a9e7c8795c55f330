import { loadConfig, runMain, serviceEnv } from '@platform/service-kit';
import { startClusters } from './app';

runMain('clusters', () => loadConfig(serviceEnv), startClusters);
