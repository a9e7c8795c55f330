export {
  CONTRACTS_LICENSING_KEPT,
  contractsLicensingClients,
  keptContracts,
  keptContractsLicensingReads,
  CONTRACT_READS,
  type ContractsLicensingClients,
  type ContractsLicensingKeeping,
  CONTRACTS_LICENSING_SERVICES,
} from './clients';
