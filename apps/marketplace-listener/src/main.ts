import { loadConfig, runMain } from '@platform/service-kit';
import { startMarketplaceListener } from './app';
import { listenerEnv } from './config';

runMain('marketplace-listener', () => loadConfig(listenerEnv), startMarketplaceListener);
