import { licensingV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { Licenses } from './licenses';
import type { LicenseRegistration } from './registration';

/** The LicensingService methods that change nothing; every other one is announced as a change (announcingWrites). */
export const LICENSING_READS: readonly (keyof typeof licensingV1.LicensingServiceService)[] = [
  'verifyRegistration',
  'listRegistrations',
  'revocationList',
  'caCertificate',
  'getIssuedLicenses',
];

/** The LicensingService binding: one line per RPC of proto/platformadmin/contractslicensing/v1/licensing.proto. */
export function licensingService(
  licenses: Licenses,
  registration: LicenseRegistration,
  caPem: string,
): ServiceBinding<typeof licensingV1.LicensingServiceService> {
  return bindService(licensingV1.LicensingServiceService, {
    issueContractLicense: (req) => licenses.issueForBinding(req),
    issueClusterLicense: (req) => licenses.issueForCluster(req),
    verifyRegistration: (req) => licenses.verifyRegistration(req),
    recordRegistration: (req) => licenses.recordRegistration(req),
    registerLicense: (req, ctx) => registration.register(req, ctx),
    listRegistrations: async () => ({ registrations: await licenses.registrations() }),
    revocationList: () => licenses.revocationList(),
    caCertificate: async () => ({ pem: caPem }),
    getIssuedLicenses: async (req) => ({ licenses: await licenses.issued(req.serials) }),
  });
}
