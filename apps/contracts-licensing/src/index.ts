export { contractsLicensingApp } from './app';
