import { z } from 'zod';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import * as p from '../../params';
import { sectionRoutes, type ErrorSpec, type Grant, type Requirement, type Route, type Target } from '../../route';
import { orgInPath } from '../../targets';
import {
  CreatedServiceAccountTokenJson,
  createdTokenJson,
  ServiceAccountJson,
  serviceAccountJson,
  ServiceAccountTokenJson,
  tokenJson,
} from './presenters';

const route = sectionRoutes({ tag: 'Service accounts', backend: 'orgs-teams' });

// Service accounts (docs/service-accounts.md), in the shape of Grafana's service accounts API: site admins keep the
// site-wide ones under /admin, an organization's owners (and site admins) keep its own under /orgs/{orgname}. Bodies
// are strict: a field the route does not take is 422, never accepted and ignored.

/** Most roles and Kubernetes subjects one account holds (orgs-teams checks the same). */
const MAX_ITEMS = 50;
/** `<namespace>/<name>`: a DNS label, a slash and a DNS subdomain. */
const KUBERNETES_SUBJECT_MAX = 63 + 1 + 253;

const common = {
  name: z
    .string()
    .min(1)
    .max(L.login)
    .meta({ description: 'Its login: letters, digits, `.`, `_` or `-` inside, unique among all accounts' }),
  description: z.string().max(L.description).optional(),
  kubernetes_subjects: z
    .array(z.string().min(1).max(KUBERNETES_SUBJECT_MAX))
    .max(MAX_ITEMS)
    .optional()
    .meta({ description: 'Kubernetes ServiceAccounts `<namespace>/<name>` whose tokens authenticate as it (replaced whole)' }),
  active: z.boolean().optional().meta({ description: 'false: it authenticates nobody (default true)' }),
};
const roles = z
  .array(z.number().int().positive().meta({ format: 'int64' }))
  .max(MAX_ITEMS)
  .optional()
  .meta({ description: 'Custom roles of the organization it holds (replaced whole)' });
const siteAdmin = z.boolean().optional().meta({ description: 'Whether it is a site admin' });

const CreateOrgServiceAccount = z.strictObject({ ...common, roles }).meta({ id: 'CreateOrgServiceAccountOption' });
const EditOrgServiceAccount = z
  .strictObject({ ...common, name: common.name.optional(), roles })
  .meta({ id: 'EditOrgServiceAccountOption' });
const CreateSiteServiceAccount = z.strictObject({ ...common, site_admin: siteAdmin }).meta({ id: 'CreateSiteServiceAccountOption' });
const EditSiteServiceAccount = z
  .strictObject({ ...common, name: common.name.optional(), site_admin: siteAdmin })
  .meta({ id: 'EditSiteServiceAccountOption' });
const CreateToken = z.strictObject({ name: z.string().min(1).max(L.tokenName) }).meta({ id: 'CreateServiceAccountTokenOption' });

/** What the routes read of a body, whichever scope's schema parsed it. */
interface AccountBody {
  name?: string;
  description?: string;
  roles?: number[];
  site_admin?: boolean;
  kubernetes_subjects?: string[];
  active?: boolean;
}

type Organization = orgsTeamsOrgsV1.Organization;

/** Giving an account custom roles takes holding every permission they carry (docs/authorization.md); `[]` gives nothing. */
const GIVES_ROLES = {
  describe: 'every permission of the roles in `roles`, on the organization',
  of: ({ body }: { body: AccountBody }, { target }: { target: Organization | undefined }): Grant | undefined =>
    target && body.roles?.length ? { orgId: target.id, roleIds: body.roles, what: 'roles' } : undefined,
};

/**
 * Binding Kubernetes ServiceAccounts is for site admins: an organization's owner cannot show that `<namespace>/<name>`
 * is theirs, and a subject names one account at most, so an owner naming another team's ServiceAccount would take
 * it from them (and its pods would act for the owner's organization). Clearing the list takes nothing.
 */
const SUBJECTS_BY_SITE_ADMINS: Requirement<'organization', { body: AccountBody }> = {
  anyOf: [
    {
      check: 'no `kubernetes_subjects` are given',
      holds: ({ body }) => (body.kubernetes_subjects ?? []).length === 0,
      denied: 'Kubernetes subjects given',
    },
    { on: 'site', permission: 'admin:site' },
  ],
  denied: 'Kubernetes subjects are bound by site admins',
};

/** Where one scope's rows live and who may call them. */
interface Scope {
  /** The collection's path, e.g. `/orgs/:orgname/service-accounts`. */
  path: string;
  /** The Gitea token scope category of its rows: `admin` for the site-wide accounts, `organization` for an org's. */
  scopeCategory: 'admin' | 'organization';
  /** What the summaries call one account, and who may call the rows. */
  noun: string;
  who: string;
  /** The collection path's parameters. */
  params: z.ZodObject<z.ZodRawShape>;
  /** The organization in the path (its parameters are the collection's). */
  target?: Target<'organization', Organization, any>;
  requires: Requirement<'organization'>[];
  create: z.ZodType<AccountBody & { name: string }>;
  edit: z.ZodType<AccountBody>;
  /** What giving roles takes (the organization's accounts). */
  gives?: typeof GIVES_ROLES;
  /** What the body of a create or an edit further takes. */
  checks?: Requirement<'organization', { body: AccountBody }>[];
  /** The 400 its writes answer besides the body's 422, when there is one. */
  invalid?: ErrorSpec;
}

/** The organization of the scope's accounts, from the resolved target: id 0 and no name for the site-wide ones. */
const orgOf = (target: Organization | undefined) => ({ id: target?.id ?? 0, name: target?.username ?? null });

const UNKNOWN = { status: 404, description: 'for an id that is not one of these service accounts' };
const UNKNOWN_TOKEN = { status: 404, description: "for an account that is not one of these, or a token that is not the account's" };

function scopeRoutes(scope: Scope): Route[] {
  // The handlers read the ids only; the scope's own parameters are its target's.
  const one = scope.params.extend({ id: p.id }) as unknown as z.ZodObject<{ id: typeof p.id }>;
  const oneToken = scope.params.extend({ id: p.id, tokenId: p.id }) as unknown as z.ZodObject<{ id: typeof p.id; tokenId: typeof p.id }>;
  const base = { auth: 'token' as const, target: scope.target, requires: scope.requires };
  return [
    route({
      ...base,
      method: 'get',
      scope: `read:${scope.scopeCategory}`,
      path: scope.path,
      summary: `List the ${scope.noun}s, by name (${scope.who})`,
      params: scope.params,
      response: { status: 200, schema: z.array(ServiceAccountJson) },
      async handle(_input, { kept, target }) {
        const org = orgOf(target);
        const { serviceAccounts } = await kept.orgsTeams.serviceAccounts.listServiceAccounts({ orgId: org.id });
        return { body: serviceAccounts.map((a) => serviceAccountJson(a, org.name)) };
      },
    }),
    route({
      ...base,
      method: 'post',
      scope: `write:${scope.scopeCategory}`,
      path: scope.path,
      summary: `Create a ${scope.noun} (${scope.who})`,
      params: scope.params,
      body: { schema: scope.create },
      checks: scope.checks,
      gives: scope.gives,
      response: { status: 201, schema: ServiceAccountJson },
      errors: [
        ...(scope.invalid ? [scope.invalid] : []),
        { status: 409, description: 'for a name any account has, or a Kubernetes subject another service account has' },
      ],
      async handle({ body }, { backends, caller, target }) {
        const org = orgOf(target);
        const account = await backends.orgsTeams.serviceAccounts.createServiceAccount({
          orgId: org.id,
          name: body.name,
          description: body.description ?? '',
          roleIds: body.roles ?? [],
          siteAdmin: body.site_admin ?? false,
          kubernetesSubjects: body.kubernetes_subjects ?? [],
          active: body.active,
          creatorId: caller.id,
        });
        return { body: serviceAccountJson(account, org.name) };
      },
    }),
    route({
      ...base,
      method: 'get',
      scope: `read:${scope.scopeCategory}`,
      path: `${scope.path}/:id`,
      summary: `A ${scope.noun} (${scope.who})`,
      params: one,
      response: { status: 200, schema: ServiceAccountJson },
      errors: [UNKNOWN],
      async handle({ params }, { kept, target }) {
        const org = orgOf(target);
        return {
          body: serviceAccountJson(await kept.orgsTeams.serviceAccounts.getServiceAccount({ orgId: org.id, id: params.id }), org.name),
        };
      },
    }),
    route({
      ...base,
      method: 'patch',
      scope: `write:${scope.scopeCategory}`,
      path: `${scope.path}/:id`,
      summary: `Edit a ${scope.noun}: the fields given, lists replaced whole (${scope.who})`,
      params: one,
      body: { schema: scope.edit },
      checks: scope.checks,
      gives: scope.gives,
      response: { status: 200, schema: ServiceAccountJson },
      errors: [
        UNKNOWN,
        ...(scope.invalid ? [scope.invalid] : []),
        { status: 409, description: 'for a name any other account has, or a Kubernetes subject another service account has' },
      ],
      async handle({ params, body }, { backends, target, forgetTokens }) {
        const org = orgOf(target);
        const account = await backends.orgsTeams.serviceAccounts.editServiceAccount({
          orgId: org.id,
          id: params.id,
          name: body.name,
          description: body.description,
          roleIds: body.roles && { ids: body.roles },
          siteAdmin: body.site_admin,
          kubernetesSubjects: body.kubernetes_subjects && { subjects: body.kubernetes_subjects },
          active: body.active,
        });
        // Deactivated or holding other roles: its tokens are not taken on trust from this gateway's cache again.
        forgetTokens([params.id]);
        return { body: serviceAccountJson(account, org.name) };
      },
    }),
    route({
      ...base,
      method: 'delete',
      scope: `write:${scope.scopeCategory}`,
      path: `${scope.path}/:id`,
      summary: `Delete a ${scope.noun} with its tokens (${scope.who})`,
      params: one,
      response: { status: 204 },
      errors: [UNKNOWN],
      async handle({ params }, { backends, target, forgetTokens }) {
        await backends.orgsTeams.serviceAccounts.deleteServiceAccount({ orgId: orgOf(target).id, id: params.id });
        forgetTokens([params.id]);
        return {};
      },
    }),
    route({
      ...base,
      method: 'get',
      scope: `read:${scope.scopeCategory}`,
      path: `${scope.path}/:id/tokens`,
      summary: `The tokens of a ${scope.noun}, never their secrets (${scope.who})`,
      params: one,
      response: { status: 200, schema: z.array(ServiceAccountTokenJson) },
      errors: [UNKNOWN],
      async handle({ params }, { kept, target }) {
        const { tokens } = await kept.orgsTeams.serviceAccounts.listServiceAccountTokens({ orgId: orgOf(target).id, id: params.id });
        return { body: tokens.map(tokenJson) };
      },
    }),
    route({
      ...base,
      method: 'post',
      scope: `write:${scope.scopeCategory}`,
      path: `${scope.path}/:id/tokens`,
      summary: `Create a token of a ${scope.noun}; the secret \`sha1\` is shown only now (${scope.who})`,
      params: one,
      body: { schema: CreateToken },
      response: { status: 201, schema: CreatedServiceAccountTokenJson },
      errors: [UNKNOWN, { status: 409, description: 'for a name another token of the account has' }],
      async handle({ params, body }, { backends, target }) {
        const token = await backends.orgsTeams.serviceAccounts.createServiceAccountToken({
          orgId: orgOf(target).id,
          serviceAccountId: params.id,
          name: body.name,
        });
        return { body: createdTokenJson(token) };
      },
    }),
    route({
      ...base,
      method: 'delete',
      scope: `write:${scope.scopeCategory}`,
      path: `${scope.path}/:id/tokens/:tokenId`,
      summary: `Delete a token of a ${scope.noun}; it is refused from the next request on (${scope.who})`,
      params: oneToken,
      response: { status: 204 },
      errors: [UNKNOWN_TOKEN],
      async handle({ params }, { backends, target, forgetTokens }) {
        await backends.orgsTeams.serviceAccounts.deleteServiceAccountToken({
          orgId: orgOf(target).id,
          serviceAccountId: params.id,
          id: params.tokenId,
        });
        forgetTokens([params.id]);
        return {};
      },
    }),
  ];
}

export const serviceAccountRoutes: Route[] = [
  ...scopeRoutes({
    path: '/admin/service-accounts',
    scopeCategory: 'admin',
    noun: 'site-wide service account',
    who: 'site admins',
    params: z.object({}),
    requires: [{ on: 'site', permission: 'admin:site' }],
    create: CreateSiteServiceAccount,
    edit: EditSiteServiceAccount,
  }),
  ...scopeRoutes({
    path: '/orgs/:orgname/service-accounts',
    scopeCategory: 'organization',
    noun: "organization's service account",
    who: 'owners and site admins',
    params: z.object({ orgname: p.login }),
    target: orgInPath,
    // Owners and site admins, never a custom role: an account's roles are given by those who hold every one.
    requires: [{ on: 'target', permission: 'manage_owners:org', denied: 'org ownership required' }],
    create: CreateOrgServiceAccount,
    edit: EditOrgServiceAccount,
    checks: [SUBJECTS_BY_SITE_ADMINS],
    gives: GIVES_ROLES,
    invalid: { status: 400, description: 'for a role that is not a custom role of the organization' },
  }),
];
