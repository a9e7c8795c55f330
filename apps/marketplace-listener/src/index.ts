export { marketplaceListenerApp } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as marketplaceListenerMigrations } from '../migrations';
