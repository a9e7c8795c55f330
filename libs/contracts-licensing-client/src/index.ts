export {
  contractsLicensingClients,
  keptContracts,
  keptContractsLicensingReads,
  CONTRACT_READS,
  type ContractsLicensingClients,
  type ContractsLicensingKeeping,
} from './clients';
