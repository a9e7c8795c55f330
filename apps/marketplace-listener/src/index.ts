export { startMarketplaceListener } from './app';
export { listenerEnv, type ListenerConfig } from './config';
