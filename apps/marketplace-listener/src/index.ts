export { marketplaceListenerApp } from './app';
