import { orgTokensV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { OrgTokens } from './org-tokens';

const done = { message: 'ok' };

/**
 * The OrgTokensService methods that change nothing; every other one is announced (changes.ts). getSyncToken writes on
 * its first read (the sealed secret is shown once, then dropped), which a read announces as any write (changes.ts).
 */
export const ORG_TOKENS_READS: readonly (keyof typeof orgTokensV1.OrgTokensServiceService)[] = [
  'getSyncToken',
  'listSystemAdminTokens',
  'listBusAccounts',
  'getBusAccountByKey',
];

/** The OrgTokensService RPCs. */
export function orgTokensService(tokens: OrgTokens): ServiceBinding<typeof orgTokensV1.OrgTokensServiceService> {
  return bindService(orgTokensV1.OrgTokensServiceService, {
    getSyncToken: (req) => tokens.getSyncToken(req.orgId),
    createSyncToken: async (req) => (await tokens.createSyncToken(req), { message: 'manager sync token created' }),
    deleteSyncToken: async (req) => (await tokens.deleteSyncToken(req.orgId), done),
    listSystemAdminTokens: async (req) => ({ tokens: await tokens.listSystemAdminTokens(req.orgId) }),
    deleteSystemAdminToken: async (req) => (await tokens.deleteSystemAdminToken(req.orgId, req.id), done),
    listBusAccounts: async (req) => ({ accounts: await tokens.listBusAccounts(req.orgId) }),
    revokeBusAccount: async (req) => (await tokens.revokeBusAccount(req.orgId, req.id), done),
    createBusAccount: (req) => tokens.createBusAccount(req),
    getBusAccountByKey: (req) => tokens.getBusAccountByKey(req.busPubKey),
  });
}
