import { loadConfig, runMain } from '@platform/service-kit';
import { startGateway } from './app';
import { gatewayEnv } from './config';

runMain('gateway', () => loadConfig(gatewayEnv), startGateway);
