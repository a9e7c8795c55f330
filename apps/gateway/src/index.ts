export { startGateway } from './app';
export { gatewayEnv, type GatewayConfig } from './config';
