import { z } from 'zod';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import * as p from '../../params';
import { sectionRoutes, type Route } from '../../route';
import { orgInPath } from '../../targets';
import {
  AccessTokenInfoJson,
  accessTokenInfo,
  BusAccountJson,
  busAccount,
  ManagerApiTokenJson,
  managerApiToken,
  MessageJson,
} from './presenters';

const route = sectionRoutes({ tag: 'Tokens', backend: 'orgs-teams' });

// An organization's machine credentials: manager sync tokens, the system admin's access tokens and bus tokens.

/** AccessToken as the sync-token creation body; every field optional. */
const AccessToken = z.object({
  id: z.number().int().optional(),
  name: z.string().max(L.tokenName).optional(),
  sha1: z.string().max(L.token).optional(),
  token_last_eight: z.string().max(L.token).optional(),
});

const Org = z.object({ orgname: p.login });
const OrgAndId = Org.extend({ id: p.id });

/** The three sync-token routes under one path; the deprecated `user-token` path serves the same. */
function syncTokenRoutes(segment: 'sync-token' | 'user-token'): Route[] {
  const deprecated = segment === 'user-token' ? ' (deprecated)' : '';
  const path = `/orgs/:orgname/manager/${segment}`;
  return [
    route({
      method: 'get',
      scope: 'read:organization',
      path,
      summary: `The organization's multi-cluster-manager sync token${deprecated}`,
      auth: 'token',
      params: Org,
      target: orgInPath,
      requires: [{ on: 'target', permission: 'view:sync-token' }],
      response: { status: 200, schema: ManagerApiTokenJson },
      async handle(_input, { kept, target }) {
        return { body: managerApiToken(await kept.orgsTeams.orgTokens.getSyncToken({ orgId: target.id })) };
      },
    }),
    route({
      method: 'post',
      scope: 'write:organization',
      path,
      summary: `Create the multi-cluster-manager sync token${deprecated}`,
      auth: 'token',
      params: Org,
      target: orgInPath,
      requires: [{ on: 'target', permission: 'create:manager-org-sync-token' }],
      body: { schema: AccessToken },
      response: { status: 200, schema: MessageJson },
      async handle({ body }, { backends, target, forgetTokens }) {
        const res = await backends.orgsTeams.orgTokens.createSyncToken({ orgId: target.id, name: body.name ?? '', sha1: body.sha1 ?? '' });
        // A new sync token replaces the old one; the system admin's id is orgs-teams' to know, so forget all.
        forgetTokens();
        return { body: { message: res.message } };
      },
    }),
    route({
      method: 'delete',
      scope: 'write:organization',
      path,
      summary: `Remove the multi-cluster-manager sync token${deprecated}`,
      auth: 'token',
      params: Org,
      target: orgInPath,
      requires: [{ on: 'target', permission: 'remove:manager-sync-token' }],
      response: { status: 200, schema: MessageJson },
      async handle(_input, { backends, target, forgetTokens }) {
        await backends.orgsTeams.orgTokens.deleteSyncToken({ orgId: target.id });
        forgetTokens();
        return { body: { message: 'manager sync token removed' } };
      },
    }),
  ];
}

export const orgTokensRoutes: Route[] = [
  ...syncTokenRoutes('sync-token'),
  ...syncTokenRoutes('user-token'),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/tokens/access-tokens',
    summary: "Access tokens of the organization's system admin",
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'list:access-token' }],
    response: { status: 200, schema: z.array(AccessTokenInfoJson) },
    async handle(_input, { kept, target }) {
      const { tokens } = await kept.orgsTeams.orgTokens.listSystemAdminTokens({ orgId: target.id });
      return { body: tokens.map(accessTokenInfo) };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:organization',
    path: '/orgs/:orgname/tokens/access-tokens/:id',
    summary: "Delete an access token of the organization's system admin",
    auth: 'token',
    params: OrgAndId,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'delete:access-token' }],
    response: { status: 200, schema: MessageJson },
    async handle({ params }, { backends, target, forgetTokens }) {
      await backends.orgsTeams.orgTokens.deleteSystemAdminToken({ orgId: target.id, id: params.id });
      forgetTokens();
      return { body: { message: 'access token deleted' } };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/tokens/bus-tokens',
    summary: "Bus (message-bus user) accounts of the organization's system admin",
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'list:bus-token' }],
    response: { status: 200, schema: z.array(BusAccountJson) },
    async handle(_input, { kept, target }) {
      const { accounts } = await kept.orgsTeams.orgTokens.listBusAccounts({ orgId: target.id });
      return { body: accounts.map(busAccount) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs/:orgname/tokens/bus-tokens/:id/revoke',
    summary: 'Revoke a bus account',
    auth: 'token',
    params: OrgAndId,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'revoke:bus-token' }],
    response: { status: 200, schema: MessageJson },
    async handle({ params }, { backends, target }) {
      await backends.orgsTeams.orgTokens.revokeBusAccount({ orgId: target.id, id: params.id });
      return { body: { message: 'bus token revoked' } };
    },
  }),
];
