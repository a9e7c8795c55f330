import { licensedV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { LicensedUsage } from './licensed';

/** The LicensedUsageService binding: one line per RPC of proto/platformadmin/billingdashboard/v1/licensed.proto. */
export function licensedUsageService(licensed: LicensedUsage): ServiceBinding<typeof licensedV1.LicensedUsageServiceService> {
  return bindService(licensedV1.LicensedUsageServiceService, {
    listLicensedUsers: async (q) => ({ entries: await licensed.list('users', q) }),
    listUserClusters: async (q) => ({ entries: await licensed.list('clusters', q) }),
    listClusterLicenses: async (q) => ({ entries: await licensed.list('licenses', q) }),
    listLicensedProducts: async (q) => ({ entries: await licensed.list('products', q) }),
    listActiveClusterLicenses: async (q) => ({ entries: await licensed.list('clusterLicenses', q) }),
  });
}
