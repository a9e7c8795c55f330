import { loadConfig, runMain, serviceEnv } from '@platform/service-kit';
import { startAuthz } from './app';

runMain('authz', () => loadConfig(serviceEnv), startAuthz);
