export { contractsLicensingApp } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as contractsLicensingMigrations } from '../migrations';
