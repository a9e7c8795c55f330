export {
  CONTRACTS_LICENSING_KEPT,
  contractsLicensingClients,
  keptContracts,
  keptContractsLicensingReads,
  CONTRACT_READS,
  type ContractsLicensingClients,
  type ContractsLicensingKeeping,
} from './clients';
