export { contractsLicensingApp } from './app';
// For the admin CLI's migrate (deploy/cli).
export { migrations as contractsLicensingMigrations } from '../migrations';
// The licensing core, for the license routes and the command-line verifier.
export * from './licensing';
