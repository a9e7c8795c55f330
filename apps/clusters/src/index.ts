export { clustersApp } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as clustersMigrations } from '../migrations';
