import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { licenseAuthority } from './20261123000000_license_authority';
import { contracts } from './20261123010000_contracts';
import { issuedLicenses } from './20261123020000_issued_licenses';
import { contractClusterDisplayName } from './20261201000000_contract_cluster_display_name';
import { licenseRegistrations } from './20261201010000_license_registrations';
import { notices, noticesOutbox } from './20261215000000_notices';
import { mailDeliveries } from './20261222000000_mail_deliveries';

/** Every migration of the contracts schema, oldest first. */
export const migrations: Migration[] = [
  init,
  licenseAuthority,
  contracts,
  issuedLicenses,
  contractClusterDisplayName,
  licenseRegistrations,
  noticesOutbox,
  notices,
  mailDeliveries,
];
