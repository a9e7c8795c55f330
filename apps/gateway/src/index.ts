export { gatewayApp } from './app';
