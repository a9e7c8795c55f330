export { metricsproxyApp } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as metricsproxyMigrations } from '../migrations';
