import { webUrl } from '../../web-url';
import { z } from 'zod';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import { sectionRoutes } from '../../route';

const route = sectionRoutes({ tag: 'Organizations', backend: 'orgs-teams' });

// The import of organizations, teams, members and custom roles in bulk (docs/import.md): the admin CLI reads a file and
// sends it here in batches, one per request. Over-long texts and a body of the wrong shape are 422 (docs/limits.md);
// a value the service refuses (an unknown user, a bad name) refuses that organization alone, in the answer.

/** Organizations one request may carry; the CLI sends fewer (its batches stay well under the 1 MiB body limit). */
export const IMPORT_BATCH_MAX_ORGS = 1000;

const login = z.string().min(1).max(L.login);
const text = (max: number) => z.string().max(max).optional();

const ImportedPermission = z.strictObject({
  namespace: z.string().min(1).max(L.permissionPart),
  action: z.string().min(1).max(L.permissionPart),
});

const ImportedRole = z.strictObject({
  name: z.string().min(1).max(L.roleName),
  description: text(L.description),
  permissions: z.array(ImportedPermission).max(1000),
});

const ImportedTeam = z.strictObject({
  name: z.string().min(1).max(L.teamName),
  description: text(L.description),
  permission: z.enum(['read', 'write', 'admin']).optional().meta({ description: 'read when absent' }),
  type: z.enum(['general', 'kubernetes']).optional().meta({ description: 'general when absent' }),
  members: z.array(login).max(10_000).default([]).meta({ description: 'logins of existing users' }),
  roles: z.array(z.string().min(1).max(L.roleName)).max(100).default([]).meta({ description: "names of the organization's custom roles" }),
});

const ImportedOrg = z.strictObject({
  name: login.meta({ description: "the organization's name (slug)" }),
  full_name: text(L.fullName),
  description: text(L.description),
  // As POST /orgs takes it: http(s) only, so an imported organization links to no script.
  website: webUrl(L.website, "The organization's website").optional(),
  location: text(L.location),
  visibility: z.enum(['public', 'limited', 'private']).optional().meta({ description: 'public when absent' }),
  owners: z
    .array(login)
    .max(10_000)
    .default([])
    .meta({ description: 'logins of existing users put in its Owners team; none: the caller, as POST /orgs makes the creator the owner' }),
  teams: z.array(ImportedTeam).max(10_000).default([]),
  roles: z.array(ImportedRole).max(1000).default([]),
});

export const ImportOrgsOption = z
  .strictObject({ organizations: z.array(ImportedOrg).min(1).max(IMPORT_BATCH_MAX_ORGS) })
  .meta({ id: 'ImportOrgsOption', description: 'One batch of an import file' });

const ImportCountsJson = z
  .object({
    orgs: z.number().int(),
    teams: z.number().int(),
    memberships: z.number().int(),
    roles: z.number().int(),
    role_assignments: z.number().int(),
  })
  .meta({ id: 'ImportCounts' });

const ImportedOrgResultJson = z
  .object({
    name: z.string(),
    outcome: z.enum(['created', 'completed', 'unchanged', 'refused']).meta({
      description: 'created: new; completed: it existed and something was added; unchanged: everything was there; refused: nothing written',
    }),
    id: z.number().int().meta({ description: "the organization's id; 0 when refused" }),
    created: ImportCountsJson,
    existing: ImportCountsJson,
    errors: z.array(z.string()).meta({ description: 'why it was refused (or its custom roles were), each naming the value at fault' }),
  })
  .meta({ id: 'ImportedOrgResult' });

export const ImportOrgsResultJson = z.object({ results: z.array(ImportedOrgResultJson) }).meta({ id: 'ImportOrgsResult' });

const counts = (c: { orgs: number; teams: number; memberships: number; roles: number; roleAssignments: number } | undefined) => ({
  orgs: c?.orgs ?? 0,
  teams: c?.teams ?? 0,
  memberships: c?.memberships ?? 0,
  roles: c?.roles ?? 0,
  role_assignments: c?.roleAssignments ?? 0,
});

export const importRoutes = [
  route({
    method: 'post',
    scope: 'write:admin',
    path: '/admin/orgs/import',
    summary:
      'Import one batch of organizations with their teams, members and custom roles (site admin): each organization whole or refused, what exists kept, so a batch sent again changes nothing',
    auth: 'token',
    requires: [{ on: 'site', permission: 'admin:site' }],
    body: { schema: ImportOrgsOption },
    response: { status: 200, schema: ImportOrgsResultJson, description: 'what became of each organization, in the order sent' },
    async handle({ body }, { backends, caller }) {
      const { results } = await backends.orgsTeams.organizations.importOrgs({
        requesterId: caller.id,
        orgs: body.organizations.map((o) => ({
          name: o.name,
          fullName: o.full_name ?? '',
          description: o.description ?? '',
          website: o.website ?? '',
          location: o.location ?? '',
          visibility: o.visibility ?? '',
          owners: o.owners,
          teams: o.teams.map((t) => ({
            name: t.name,
            description: t.description ?? '',
            permission: t.permission ?? '',
            type: t.type ?? '',
            members: t.members,
            roles: t.roles,
          })),
          roles: o.roles.map((r) => ({ name: r.name, description: r.description ?? '', permissions: r.permissions })),
        })),
      });
      return {
        body: {
          results: results.map((r) => ({
            name: r.name,
            outcome: r.outcome as 'created' | 'completed' | 'unchanged' | 'refused',
            id: r.orgId,
            created: counts(r.created),
            existing: counts(r.existing),
            errors: r.errors,
          })),
        },
      };
    },
  }),
];
