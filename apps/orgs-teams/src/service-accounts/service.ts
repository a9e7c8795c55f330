import { serviceAccountsV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { ServiceAccounts } from './service-accounts';

/** The ServiceAccountsService methods that change nothing; every other one is announced (changes.ts). */
export const SERVICE_ACCOUNTS_READS: readonly (keyof typeof serviceAccountsV1.ServiceAccountsServiceService)[] = [
  'listServiceAccounts',
  'getServiceAccount',
  'listServiceAccountTokens',
];

/** The ServiceAccountsService RPCs. */
export function serviceAccountsService(accounts: ServiceAccounts): ServiceBinding<typeof serviceAccountsV1.ServiceAccountsServiceService> {
  return bindService(serviceAccountsV1.ServiceAccountsServiceService, {
    createServiceAccount: (req, ctx) => accounts.create(req, ctx),
    listServiceAccounts: async (req, ctx) => ({ serviceAccounts: await accounts.list(req.orgId, ctx) }),
    getServiceAccount: (req, ctx) => accounts.get(req.orgId, req.id, ctx),
    editServiceAccount: (req, ctx) => accounts.edit(req, ctx),
    deleteServiceAccount: async (req, ctx) => (await accounts.delete(req.orgId, req.id, ctx), {}),
    createServiceAccountToken: (req) => accounts.createToken(req),
    listServiceAccountTokens: async (req) => ({ tokens: await accounts.listTokens(req.orgId, req.id) }),
    deleteServiceAccountToken: async (req) => (await accounts.deleteToken(req), {}),
  });
}
