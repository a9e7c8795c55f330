import type { Database } from '@platform/db';
import { orgTokensV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import { OrgTokens } from './org-tokens';
import type { SecretBox } from './secret-box';

const done = { message: 'ok' };

/** The OrgTokensService RPCs. */
export function orgTokensService(db: Database, secrets: SecretBox): ServiceBinding<typeof orgTokensV1.OrgTokensServiceService> {
  const tokens = new OrgTokens(db, secrets);
  return bindService(orgTokensV1.OrgTokensServiceService, {
    getSyncToken: (req) => tokens.getSyncToken(req.orgId),
    createSyncToken: async (req) => (await tokens.createSyncToken(req), { message: 'manager sync token created' }),
    deleteSyncToken: async (req) => (await tokens.deleteSyncToken(req.orgId), done),
    listSystemAdminTokens: async (req) => ({ tokens: await tokens.listSystemAdminTokens(req.orgId) }),
    deleteSystemAdminToken: async (req) => (await tokens.deleteSystemAdminToken(req.orgId, req.id), done),
    listBusAccounts: async (req) => ({ accounts: await tokens.listBusAccounts(req.orgId) }),
    revokeBusAccount: async (req) => (await tokens.revokeBusAccount(req.orgId, req.id), done),
    createBusAccount: (req) => tokens.createBusAccount(req),
  });
}
