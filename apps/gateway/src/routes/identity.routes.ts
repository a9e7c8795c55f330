import { z } from 'zod';
import { NotAllowedError } from '@platform/errors';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import { userJson } from '../presenters';
import type { Route, RouteContext } from '../route';
import { parseBody, parseId } from '../validation';

// Over-long texts are 422, as orgs-teams answers an invalid login, email or password; limits: docs/limits.md.
const CreateUserOption = z.object({
  username: z.string().min(1).max(L.login),
  email: z.string().min(1).max(L.email),
  password: z.string().min(1).max(L.password),
  full_name: z.string().max(L.fullName).optional(),
  must_change_password: z.boolean().optional(),
});

const CreateAccessTokenOption = z.object({ name: z.string().min(1).max(L.tokenName) });

/** The token routes act on the Basic-authenticated user only. */
function sameUser(ctx: RouteContext, username: string): number {
  const caller = ctx.caller!;
  if (caller.login.toLowerCase() !== username.toLowerCase()) throw new NotAllowedError('you can only manage your own access tokens');
  return caller.id;
}

/**
 * Gitea-compatible identity routes the spec lacks but every client needs: create users (site admin),
 * who am I, and personal access tokens (HTTP Basic auth of the owner).
 */
export const identityRoutes: Route[] = [
  {
    method: 'post',
    path: '/admin/users',
    summary: 'Create a user (site admin)',
    auth: 'token',
    check: { permission: 'admin:site', on: 'site' },
    service: 'orgs-teams',
    async handle(req, { backends, requestId }) {
      const body = parseBody(CreateUserOption, req.body);
      const user = await backends['orgs-teams'].createUser(
        {
          username: body.username,
          email: body.email,
          password: body.password,
          fullName: body.full_name ?? '',
          mustChangePassword: body.must_change_password ?? false,
          isAdmin: false,
        },
        { requestId },
      );
      return { status: 201, body: userJson(user) };
    },
  },
  {
    method: 'get',
    path: '/user',
    summary: 'The authenticated user',
    auth: 'token',
    service: 'orgs-teams',
    async handle(_req, { caller }) {
      return { body: userJson(caller!) };
    },
  },
  {
    method: 'post',
    path: '/users/:username/tokens',
    summary: 'Create a personal access token (HTTP Basic auth)',
    auth: 'basic',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const userId = sameUser(ctx, String(req.params.username));
      const body = parseBody(CreateAccessTokenOption, req.body);
      const token = await ctx.backends['orgs-teams'].createToken({ userId, name: body.name }, { requestId: ctx.requestId });
      return { status: 201, body: { id: token.id, name: token.name, sha1: token.sha1, token_last_eight: token.tokenLastEight } };
    },
  },
  {
    method: 'get',
    path: '/users/:username/tokens',
    summary: 'List personal access tokens (HTTP Basic auth); secrets are never listed',
    auth: 'basic',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const userId = sameUser(ctx, String(req.params.username));
      const { tokens } = await ctx.backends['orgs-teams'].listTokens({ userId }, { requestId: ctx.requestId });
      return { body: tokens.map((t) => ({ id: t.id, name: t.name, sha1: '', token_last_eight: t.tokenLastEight })) };
    },
  },
  {
    method: 'delete',
    path: '/users/:username/tokens/:id',
    summary: 'Delete a personal access token (HTTP Basic auth)',
    auth: 'basic',
    service: 'orgs-teams',
    async handle(req, ctx) {
      const userId = sameUser(ctx, String(req.params.username));
      await ctx.backends['orgs-teams'].deleteToken({ userId, id: parseId(req.params.id, 'id') }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
];
