import { orgsTeamsV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import type { Relationships } from '../relationships';
import type { Identity } from './identity';
import { createUser } from './site-admin';

/** The OrgsTeamsService RPCs: accounts, personal access tokens and authentication. */
export function orgsTeamsService(
  identity: Identity,
  relationships: Relationships,
  /** Tells the gateways that these accounts' tokens changed (their token caches). */
  accountsChanged: (userIds: number[]) => Promise<void> = async () => {},
): ServiceBinding<typeof orgsTeamsV1.OrgsTeamsServiceService> {
  return bindService(orgsTeamsV1.OrgsTeamsServiceService, {
    getVersion: async () => versionOf('orgs-teams'),
    authenticate: (req, ctx) => identity.authenticate(req.token, ctx),
    authenticateBasic: (req) => identity.authenticateBasic(req.username, req.password),
    createUser: (req, ctx) => createUser(identity, relationships, req, ctx),
    getUser: (req) => identity.getUser(req),
    deleteUnusedUser: async (req) => (await identity.deleteUnusedUser(req.id), {}),
    getUsers: async (req) => ({ users: await identity.getUsers(req.ids) }),
    getAccounts: async (req) => ({ users: await identity.getAccounts(req.ids) }),
    listUserAccounts: (req) => identity.listUserAccounts(req.afterId, req.limit),
    createToken: (req) => identity.createToken(req.userId, req.name, req.scope, req.scopeAccountId),
    listTokens: async (req) => ({ tokens: await identity.listTokens(req.userId) }),
    deleteToken: async (req) => {
      await identity.deleteToken(req.userId, req.id);
      await accountsChanged([req.userId]);
      return {};
    },
  });
}
