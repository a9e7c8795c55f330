import { contractsLicensingV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';

/** The ContractsLicensingService binding: one line per RPC of proto/platformadmin/contractslicensing/v1/, handing it to its feature. */
export function contractsLicensingService(): ServiceBinding<typeof contractsLicensingV1.ContractsLicensingServiceService> {
  return bindService(contractsLicensingV1.ContractsLicensingServiceService, {
    getVersion: async () => versionOf('contracts-licensing'),
  });
}
