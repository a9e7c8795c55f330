import { runMain } from '@platform/service-kit';
import { contractsLicensingApp } from './app';

runMain(contractsLicensingApp);
