export { startContractsLicensing } from './app';
