import { z } from 'zod';
import { pageOf as rowsOf, pageOfList } from '@platform/db';
import { NotFoundError, quote } from '@platform/errors';
import { TEXT_LIMITS as L, TOKEN_ACCESS_SCOPES } from '@platform/service-kit';
import { presentedToken } from '../../authentication';
import { giteaTime, takenNameIs422 } from '../../gitea';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PAGE_HEADERS, pageHeaders, pageOf, Paging } from '../../paging';
import * as p from '../../params';
import { sectionRoutes, type Requirement, type User } from '../../route';
import { AccessTokenJson, UserJson, userJsonFor } from './presenters';
import { emailVerificationRoutes } from './email-verification';
import { passwordResetRoutes } from './password-reset';
import { sessionRoutes } from './sessions';
import { userAdminRoutes } from './users';

const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });
const tokenRoute = sectionRoutes({ tag: 'Tokens', backend: 'orgs-teams' });

// Gitea-compatible identity routes the spec lacks but every client needs: create users (site admin), who am
// I, and personal access tokens (HTTP Basic auth of the owner). Over-long texts are 422, as orgs-teams
// answers an invalid login, email or password; limits: docs/limits.md.

const CreateUserOption = z.object({
  username: z.string().min(1).max(L.login),
  email: z.string().min(1).max(L.email),
  password: z.string().min(1).max(L.password),
  full_name: z.string().max(L.fullName).optional(),
  must_change_password: z.boolean().optional(),
});

const CreateAccessTokenOption = z.object({
  name: z.string().min(1).max(L.tokenName),
  // Gitea's scopes; none makes a token that may do everything its owner may (docs/authentication.md, "Token scopes").
  scopes: z.array(z.string().max(64)).max(TOKEN_ACCESS_SCOPES.length).optional(),
});

const OwnTokens = z.object({ username: p.login });

/**
 * The token a delete names: its id, or (as Gitea reads `{token}`) its name when it is not a number; a name of digits
 * only is read as an id, as Gitea reads it.
 */
const TokenInPath = OwnTokens.extend({
  id: z
    .string()
    .min(1)
    .max(L.tokenName)
    .meta({ description: "The token's id, or its name (a name of digits only is read as an id, as Gitea reads it)" }),
});

/** The token routes act on the Basic-authenticated user only. */
const OWN_TOKENS_ONLY: Requirement<never, { params: { username: string } }, { caller: User }> = {
  check: 'the path names the Basic-authenticated user',
  holds: ({ params }, { caller }) => caller.login.toLowerCase() === params.username.toLowerCase(),
  denied: 'you can only manage your own access tokens',
};

export const identityRoutes = [
  route({
    method: 'post',
    scope: 'write:admin',
    path: '/admin/users',
    summary: 'Create a user (site admin)',
    auth: 'token',
    requires: [{ on: 'site', permission: 'admin:site' }],
    body: { schema: CreateUserOption },
    response: { status: 201, schema: UserJson },
    errors: [{ status: 422, description: 'when the login or the email is taken, as Gitea answers' }],
    async handle({ body }, { backends, caller }) {
      const created = backends.orgsTeams.identity.createUser({
        username: body.username,
        email: body.email,
        password: body.password,
        fullName: body.full_name ?? '',
        mustChangePassword: body.must_change_password ?? false,
        isAdmin: false,
      });
      return { body: userJsonFor(await takenNameIs422(created, 'username'), caller) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user',
    summary: 'The authenticated user',
    auth: 'token',
    response: { status: 200, schema: UserJson },
    async handle(_input, { caller }) {
      return { body: userJsonFor(caller, caller) };
    },
  }),
  tokenRoute({
    method: 'post',
    scope: 'write:user',
    path: '/users/:username/tokens',
    summary: 'Create a personal access token (HTTP Basic auth); the secret `sha1` is shown only now',
    auth: 'basic',
    params: OwnTokens,
    checks: [OWN_TOKENS_ONLY],
    body: { schema: CreateAccessTokenOption },
    response: { status: 201, schema: AccessTokenJson },
    async handle({ body }, { backends, caller }) {
      const token = await backends.orgsTeams.identity.createToken({
        userId: caller.id,
        name: body.name,
        scope: '',
        scopeAccountId: 0,
        accessScopes: body.scopes ?? [],
      });
      return {
        body: { id: token.id, name: token.name, sha1: token.sha1, token_last_eight: token.tokenLastEight, scopes: token.accessScopes },
      };
    },
  }),
  tokenRoute({
    method: 'get',
    scope: 'read:user',
    path: '/users/:username/tokens',
    summary: 'List personal access tokens (HTTP Basic auth), oldest first, paged; secrets are never listed',
    auth: 'basic',
    params: OwnTokens,
    query: Paging,
    checks: [OWN_TOKENS_ONLY],
    response: { status: 200, schema: z.array(AccessTokenJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const { tokens } = await ctx.kept.orgsTeams.identity.listTokens({ userId: ctx.caller.id });
      const page = pageOf(query);
      // The kept list holds a user's tokens whole, as orgs-teams answers them, so the page is taken from it here.
      const { rows: shown, total } = pageOfList(tokens, rowsOf(page, { defaultLimit: DEFAULT_PAGE_SIZE, maxLimit: MAX_PAGE_SIZE }));
      return {
        headers: pageHeaders(ctx, page, total),
        body: shown.map((t) => ({
          id: t.id,
          name: t.name,
          sha1: '',
          token_last_eight: t.tokenLastEight,
          ...(t.scope ? { scope: t.scope } : {}),
          scopes: t.accessScopes,
          created_at: giteaTime(t.createdUnix),
          last_used_at: giteaTime(t.lastUsedUnix),
        })),
      };
    },
  }),
  tokenRoute({
    method: 'delete',
    scope: 'write:user',
    path: '/users/:username/tokens/:id',
    summary: 'Delete a personal access token by id or by name (HTTP Basic auth)',
    auth: 'basic',
    params: TokenInPath,
    checks: [OWN_TOKENS_ONLY],
    response: { status: 204 },
    errors: [{ status: 404, description: 'when the caller has no token of that id or name' }],
    async handle({ params }, { backends, kept, caller, forgetTokens }) {
      const { identity } = backends.orgsTeams;
      const byId = p.id.safeParse(params.id);
      let id = byId.success ? byId.data : 0;
      if (!/^\d+$/.test(params.id)) {
        const { tokens } = await kept.orgsTeams.identity.listTokens({ userId: caller.id });
        id = tokens.find((t) => t.name === params.id)?.id ?? 0;
      }
      if (!id) throw new NotFoundError(`access token ${quote(params.id)} does not exist`);
      await identity.deleteToken({ userId: caller.id, id });
      forgetTokens([caller.id]);
      return {};
    },
  }),
  tokenRoute({
    method: 'delete',
    scope: 'write:user',
    path: '/user/token',
    summary: 'Sign out: delete the token this request presents (the web console signs out with it)',
    auth: 'token',
    response: { status: 204 },
    async handle(_input, { backends, kept, caller, req, forgetTokens }) {
      // A token may end its own life, as signing out does, but never another token's: that needs Basic auth.
      const { tokenId } = await kept.orgsTeams.identity.authenticate({ token: presentedToken(req) ?? '' });
      await backends.orgsTeams.identity.deleteToken({ userId: caller.id, id: tokenId });
      forgetTokens([caller.id]);
      return {};
    },
  }),
  ...userAdminRoutes,
  ...sessionRoutes,
  ...emailVerificationRoutes,
  ...passwordResetRoutes,
];
