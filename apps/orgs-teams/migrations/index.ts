import { outboxMigration, type Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { accounts } from './20261122010000_accounts';
import { orgsTeams } from './20261122020000_orgs_teams';
import { siteSettings } from './20261122030000_site_settings';
import { orgTokens } from './20261122040000_org_tokens';
import { scopedTokens } from './20261123000000_scoped_tokens';
import { claimBackoff } from './20261123010000_claim_backoff';
import { auditEvents } from './20261124090000_audit_events';
import { serviceAccounts } from './20261125000000_service_accounts';
import { userSettings } from './20261201010000_user_settings';
import { tokenAccessScopes } from './20261201020000_token_access_scopes';
import { sessions } from './20261202000000_sessions';
import { registrationClosedByDefault } from './20261202010000_registration_closed_by_default';
import { twoFactor } from './20261215010000_two_factor';
import { externalIdentities } from './20261220000000_external_identities';
import { groupMappings } from './20261222000000_group_mappings';
import { emailVerification } from './20261230000000_email_verification';
import { passwordResets } from './20270110000000_password_resets';
import { orgRowVersion } from './20270120000000_org_row_version';

/** Every migration of the identity schema, oldest first. */
export const migrations: Migration[] = [
  init,
  accounts,
  orgsTeams,
  siteSettings,
  orgTokens,
  outboxMigration('20261122050000_outbox'),
  scopedTokens,
  claimBackoff,
  auditEvents,
  serviceAccounts,
  userSettings,
  tokenAccessScopes,
  sessions,
  registrationClosedByDefault,
  twoFactor,
  externalIdentities,
  groupMappings,
  emailVerification,
  passwordResets,
  orgRowVersion,
];
