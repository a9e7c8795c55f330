import { licensedV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { LicensedUsage } from './licensed';

/** The LicensedUsageService binding: one line per RPC of proto/platformadmin/billingdashboard/v1/licensed.proto. */
export function licensedUsageService(licensed: LicensedUsage): ServiceBinding<typeof licensedV1.LicensedUsageServiceService> {
  return bindService(licensedV1.LicensedUsageServiceService, {
    listLicensedUsers: (q) => licensed.answer('users', q),
    listUserClusters: (q) => licensed.answer('clusters', q),
    listClusterLicenses: (q) => licensed.answer('licenses', q),
    listLicensedProducts: (q) => licensed.answer('products', q),
    listActiveClusterLicenses: (q) => licensed.answer('clusterLicenses', q),
  });
}
