import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { licenseAuthority } from './20261123000000_license_authority';
import { contracts } from './20261123010000_contracts';
import { issuedLicenses } from './20261123020000_issued_licenses';

/** Every migration of the contracts schema, oldest first. */
export const migrations: Migration[] = [init, licenseAuthority, contracts, issuedLicenses];
