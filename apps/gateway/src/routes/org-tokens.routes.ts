import { z } from 'zod';
import type { orgTokensV1 } from '@platform/proto';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import type { Route } from '../route';
import { parseBody, parseId } from '../validation';
import { orgFromPath } from './org-path';

/** AccessToken (spec 2.2) as the sync-token creation body; every field optional. */
const AccessToken = z.object({
  id: z.number().int().optional(),
  name: z.string().max(L.tokenName).optional(),
  sha1: z.string().max(L.token).optional(),
  token_last_eight: z.string().max(L.token).optional(),
});

const managerApiToken = (t: orgTokensV1.ManagerApiToken) => ({
  userID: t.userId,
  orgID: t.orgId,
  orgName: t.orgName,
  accessKeyID: t.accessKeyId,
  secretAccessKey: t.secretAccessKey,
});

const accessTokenInfo = (t: orgTokensV1.AccessTokenInfo) => ({
  id: t.id,
  uid: t.uid,
  name: t.name,
  token: '',
  tokenLastEight: t.tokenLastEight,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  hasRecentActivity: t.hasRecentActivity,
  hasUsed: t.hasUsed,
  expDate: t.expDate,
});

const busAccount = (a: orgTokensV1.BusAccount) => ({
  id: a.id,
  uid: a.uid,
  accountType: a.accountType,
  busPubKey: a.busPubKey,
  clusterID: a.clusterId,
  productName: a.productName,
  revoked: a.revoked,
});

/** The three sync-token routes under one path; the deprecated `user-token` path serves the same. */
function syncTokenRoutes(segment: 'sync-token' | 'user-token'): Route[] {
  const deprecated = segment === 'user-token' ? ' (deprecated)' : '';
  return [
    {
      method: 'get',
      path: `/orgs/:orgname/manager/${segment}`,
      summary: `The organization's multi-cluster-manager sync token${deprecated}`,
      auth: 'token',
      check: { permission: 'view:sync-token', on: orgFromPath },
      service: 'orgs-teams',
      async handle(req, ctx) {
        const token = await ctx.backends.orgTokens.getSyncToken({ orgId: await orgFromPath(req, ctx) }, { requestId: ctx.requestId });
        return { body: managerApiToken(token) };
      },
    },
    {
      method: 'post',
      path: `/orgs/:orgname/manager/${segment}`,
      summary: `Create the multi-cluster-manager sync token${deprecated}`,
      auth: 'token',
      check: { permission: 'create:manager-org-sync-token', on: orgFromPath },
      service: 'orgs-teams',
      async handle(req, ctx) {
        const body = parseBody(AccessToken, req.body);
        const res = await ctx.backends.orgTokens.createSyncToken(
          { orgId: await orgFromPath(req, ctx), name: body.name ?? '', sha1: body.sha1 ?? '' },
          { requestId: ctx.requestId },
        );
        return { body: { message: res.message } };
      },
    },
    {
      method: 'delete',
      path: `/orgs/:orgname/manager/${segment}`,
      summary: `Remove the multi-cluster-manager sync token${deprecated}`,
      auth: 'token',
      check: { permission: 'remove:manager-sync-token', on: orgFromPath },
      service: 'orgs-teams',
      async handle(req, ctx) {
        await ctx.backends.orgTokens.deleteSyncToken({ orgId: await orgFromPath(req, ctx) }, { requestId: ctx.requestId });
        return { body: { message: 'manager sync token removed' } };
      },
    },
  ];
}

/** Spec 4.13: manager sync tokens, the system admin's access tokens and bus tokens. */
export const orgTokensRoutes: Route[] = [
  ...syncTokenRoutes('sync-token'),
  ...syncTokenRoutes('user-token'),
  {
    method: 'get',
    path: '/orgs/:orgname/tokens/access-tokens',
    summary: "Access tokens of the organization's system admin",
    auth: 'token',
    check: { permission: 'list:access-token', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const { tokens } = await ctx.backends.orgTokens.listSystemAdminTokens(
        { orgId: await orgFromPath(req, ctx) },
        { requestId: ctx.requestId },
      );
      return { body: tokens.map(accessTokenInfo) };
    },
  },
  {
    method: 'delete',
    path: '/orgs/:orgname/tokens/access-tokens/:id',
    summary: "Delete an access token of the organization's system admin",
    auth: 'token',
    check: { permission: 'delete:access-token', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const id = parseId(req.params.id, 'id');
      await ctx.backends.orgTokens.deleteSystemAdminToken({ orgId: await orgFromPath(req, ctx), id }, { requestId: ctx.requestId });
      return { body: { message: 'access token deleted' } };
    },
  },
  {
    method: 'get',
    path: '/orgs/:orgname/tokens/bus-tokens',
    summary: "Bus (message-bus user) accounts of the organization's system admin",
    auth: 'token',
    check: { permission: 'list:bus-token', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const { accounts } = await ctx.backends.orgTokens.listBusAccounts(
        { orgId: await orgFromPath(req, ctx) },
        { requestId: ctx.requestId },
      );
      return { body: accounts.map(busAccount) };
    },
  },
  {
    method: 'post',
    path: '/orgs/:orgname/tokens/bus-tokens/:id/revoke',
    summary: 'Revoke a bus account',
    auth: 'token',
    check: { permission: 'revoke:bus-token', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const id = parseId(req.params.id, 'id');
      await ctx.backends.orgTokens.revokeBusAccount({ orgId: await orgFromPath(req, ctx), id }, { requestId: ctx.requestId });
      return { body: { message: 'bus token revoked' } };
    },
  },
];
