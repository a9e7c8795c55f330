import { loadConfig, runMain, serviceEnv } from '@platform/service-kit';
import { startContractsLicensing } from './app';

runMain('contracts-licensing', () => loadConfig(serviceEnv), startContractsLicensing);
