export {
  contractsLicensingClients,
  keptContracts,
  type ContractsLicensingClients,
  type ContractsLicensingKeeping,
} from './clients';
