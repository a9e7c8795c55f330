import { z } from 'zod';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import { pageHeaders, pageOf, Paging, PAGE_HEADERS } from '../../paging';
import * as p from '../../params';
import { sectionRoutes } from '../../route';
import { currentSession } from '../../session-cookie';
import { OrganizationJson, orgJson, UserJson, userJsonFor, UserSettingsJson, userSettingsJson } from './presenters';
import { webUrl } from '../../web-url';

const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });

// User administration by site admins and one's own account, in Gitea's dialect (docs/authentication.md, "Managing
// users"): a Gitea client drives them unchanged.

const SITE_ADMIN = { on: 'site', permission: 'admin:site' } as const;

const UserInPath = z.object({ username: p.login });

/** Gitea's EditUserOption; `source_id` 0 (local) is the only source, `visibility` public and `restricted` false. */
const EditUserOption = z.object({
  email: z.string().min(1).max(L.email).optional(),
  full_name: z.string().max(L.fullName).optional(),
  password: z.string().min(1).max(L.password).optional(),
  must_change_password: z.boolean().optional(),
  admin: z.boolean().optional(),
  active: z.boolean().optional(),
  prohibit_login: z.boolean().optional(),
  allow_create_organization: z.boolean().optional(),
  login_name: z.string().max(255).optional(),
  source_id: z.literal(0, { error: 'only 0, the local source, is known here' }).optional(),
  website: webUrl(L.website, "The user's website").optional(),
  location: z.string().max(L.location).optional(),
  description: z.string().max(L.description).optional(),
  visibility: z.literal('public', { error: 'users are public here' }).optional(),
  restricted: z.literal(false, { error: 'restricted users are not supported' }).optional(),
});

/** Gitea's UserSettingsOptions. */
const UserSettingsOptions = z.object({
  full_name: z.string().max(L.fullName).optional(),
  website: webUrl(L.website, 'Your website').optional(),
  description: z.string().max(L.description).optional(),
  location: z.string().max(L.location).optional(),
  language: z.string().max(16).optional(),
  theme: z.string().max(64).optional(),
  diff_view_style: z.enum(['', 'unified', 'split']).optional(),
  hide_email: z.boolean().optional(),
  hide_activity: z.boolean().optional(),
});

const ChangePasswordOption = z.object({
  old_password: z.string().min(1).max(L.password),
  new_password: z.string().min(1).max(L.password),
});

const id = (description: string) =>
  z
    .string()
    .regex(/^\d{1,18}$/, 'must be a non-negative integer')
    .transform(Number)
    .optional()
    .meta({ type: 'integer', minimum: 0, description });

const AdminSearch = Paging.extend({
  q: z.string().max(L.login).optional().meta({ description: 'part of a login, full name or email' }),
  login_name: z.string().max(255).optional().meta({ description: "the user's sign-in name (its login when it has no other)" }),
  source_id: id('the authentication source; 0, local, holds every user'),
});

const UserSearch = Paging.extend({
  q: z.string().max(L.login).optional().meta({ description: 'part of a login or full name' }),
  uid: id('only the user with this id'),
});

const SearchResults = z.object({ ok: z.boolean(), data: z.array(UserJson) }).meta({ id: 'UserSearchResults' });

export const userAdminRoutes = [
  route({
    method: 'get',
    scope: 'read:admin',
    path: '/admin/users',
    summary: 'Users, by id, with their sign-in lockout (site admin); `q` matches login, full name and email',
    auth: 'token',
    requires: [SITE_ADMIN],
    query: AdminSearch,
    response: { status: 200, schema: z.array(UserJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      // Every user is of the local source: another source holds none.
      if (query.source_id) return { body: [], headers: pageHeaders(ctx, page, 0) };
      const { users, total } = await ctx.kept.orgsTeams.identity.searchUsers({
        q: query.q ?? '',
        uid: 0,
        loginName: query.login_name ?? '',
        page: page.page,
        limit: page.limit,
        withLockout: true,
        matchEmail: true,
      });
      return { body: users.map((u) => userJsonFor(u, ctx.caller)), headers: pageHeaders(ctx, page, Number(total)) };
    },
  }),
  route({
    method: 'patch',
    scope: 'write:admin',
    path: '/admin/users/:username',
    summary:
      'Edit a user (site admin): deactivating it or prohibiting its sign-in refuses its password and every token on the very next request; taking `admin` away takes its site rights at once',
    auth: 'token',
    requires: [SITE_ADMIN],
    params: UserInPath,
    body: { schema: EditUserOption },
    response: { status: 200, schema: UserJson },
    errors: [
      { status: 404, description: 'for an unknown user' },
      { status: 409, description: 'when the email is used by another user' },
      { status: 422, description: 'when the change would leave no site admin who can sign in, or takes your own rights' },
    ],
    async handle({ params, body }, { backends, caller, forgetTokens }) {
      const user = await backends.orgsTeams.identity.editUser({
        login: params.username,
        email: body.email,
        fullName: body.full_name,
        password: body.password,
        mustChangePassword: body.must_change_password,
        admin: body.admin,
        active: body.active,
        prohibitLogin: body.prohibit_login,
        allowCreateOrganization: body.allow_create_organization,
        loginName: body.login_name,
        website: body.website,
        location: body.location,
        description: body.description,
        editorId: caller.id,
      });
      // This gateway forgets the user's tokens now; the others hear orgs-teams' notice.
      forgetTokens([user.id]);
      return { body: userJsonFor(user, caller) };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:admin',
    path: '/admin/users/:username',
    summary:
      'Delete a user with its tokens and memberships (site admin); 422 while it is the last owner of an organization, unless `purge=true` deletes those organizations too',
    auth: 'token',
    requires: [SITE_ADMIN],
    params: UserInPath,
    query: z.object({
      purge: z.enum(['true', 'false']).optional().meta({ description: 'also delete the organizations it is the last owner of' }),
    }),
    response: { status: 204 },
    errors: [
      { status: 404, description: 'for an unknown user' },
      { status: 422, description: 'while it is the last owner of an organization (without purge), or is yourself or the last site admin' },
    ],
    async handle({ params, query }, { backends, kept, caller, forgetTokens }) {
      const user = await kept.orgsTeams.identity.getUser({ id: 0, login: params.username });
      await backends.orgsTeams.identity.deleteUser({ login: params.username, purge: query.purge === 'true', deleterId: caller.id });
      forgetTokens([user.id]);
      return {};
    },
  }),
  route({
    method: 'delete',
    scope: 'write:admin',
    path: '/admin/users/:username/lockout',
    summary: "Lift a user's sign-in lockout after too many wrong passwords (site admin)",
    auth: 'token',
    requires: [SITE_ADMIN],
    params: UserInPath,
    response: { status: 204 },
    errors: [{ status: 404, description: 'for an unknown user' }],
    async handle({ params }, { backends }) {
      await backends.orgsTeams.identity.clearSignInLockout({ login: params.username });
      return {};
    },
  }),
  route({
    method: 'get',
    scope: 'read:admin',
    path: '/admin/orgs',
    summary: 'Every organization, private ones included, by name (site admin)',
    auth: 'token',
    requires: [SITE_ADMIN],
    query: Paging,
    response: { status: 200, schema: z.array(OrganizationJson), headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      const { orgs, total } = await ctx.kept.orgsTeams.organizations.listOrgs({ viewerId: ctx.caller.id, page });
      return { body: orgs.map(orgJson), headers: pageHeaders(ctx, page, Number(total)) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/users/search',
    summary: "Search users by login or full name (signed-in users); others' emails are shown to site admins only",
    auth: 'token',
    query: UserSearch,
    response: { status: 200, schema: SearchResults, headers: PAGE_HEADERS },
    async handle({ query }, ctx) {
      const page = pageOf(query);
      const { users, total } = await ctx.kept.orgsTeams.identity.searchUsers({
        q: query.q ?? '',
        uid: query.uid ?? 0,
        loginName: '',
        page: page.page,
        limit: page.limit,
        withLockout: false,
        matchEmail: false,
      });
      const data = users.map((u) => userJsonFor(u, ctx.caller));
      return { body: { ok: true, data }, headers: pageHeaders(ctx, page, Number(total)) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/users/:username',
    summary: "A user (signed-in users); others' emails are shown to site admins only",
    auth: 'token',
    params: UserInPath,
    response: { status: 200, schema: UserJson },
    errors: [{ status: 404, description: 'for an unknown user' }],
    async handle({ params }, { kept, caller }) {
      const user = await kept.orgsTeams.identity.getUser({ id: 0, login: params.username });
      return { body: userJsonFor(user, caller) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user/settings',
    summary: "The caller's own settings",
    auth: 'token',
    response: { status: 200, schema: UserSettingsJson },
    async handle(_input, { kept, caller }) {
      return { body: userSettingsJson(await kept.orgsTeams.identity.getUser({ id: caller.id, login: '' })) };
    },
  }),
  route({
    method: 'patch',
    scope: 'write:user',
    path: '/user/settings',
    summary: "Change the caller's own settings; the fields left out stay",
    auth: 'token',
    body: { schema: UserSettingsOptions, namesAValue: true },
    response: { status: 200, schema: UserSettingsJson },
    async handle({ body }, { backends, caller, forgetTokens }) {
      const user = await backends.orgsTeams.identity.editUserSettings({
        userId: caller.id,
        fullName: body.full_name,
        website: body.website,
        description: body.description,
        location: body.location,
        language: body.language,
        theme: body.theme,
        diffViewStyle: body.diff_view_style,
        hideEmail: body.hide_email,
        hideActivity: body.hide_activity,
      });
      forgetTokens([caller.id]);
      return { body: userSettingsJson(user) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/password',
    summary:
      "Change the caller's password, giving the old one (403 when wrong, counted like a failed sign-in); clears must_change_password",
    auth: 'token',
    body: { schema: ChangePasswordOption },
    response: { status: 204 },
    errors: [
      { status: 403, description: 'when the old password is wrong' },
      { status: 429, description: 'while the account is locked after too many wrong passwords' },
    ],
    async handle({ body }, { backends, caller, forgetTokens, req }) {
      await backends.orgsTeams.identity.changePassword({
        userId: caller.id,
        oldPassword: body.old_password,
        newPassword: body.new_password,
        // The session the change is made in stays; the user's other sessions end.
        keepSessionId: currentSession(req)?.id ?? 0,
      });
      forgetTokens([caller.id]);
      return {};
    },
  }),
];
