export {
  contractsLicensingClients,
  keptContracts,
  keptContractReads,
  CONTRACT_READS,
  type ContractsLicensingClients,
  type ContractsLicensingKeeping,
} from './clients';
