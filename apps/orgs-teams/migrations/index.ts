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
];
