import { z } from 'zod';
import * as p from '../../params';
import { sectionRoutes } from '../../route';
import { orgInPath } from '../../targets';

// Single sign-on's groups to teams (docs/authentication.md, "Groups to teams"): an organization's owners map the
// provider's groups to its teams; site admins keep the site-wide mappings of a group to site admin. They are applied
// at each sign-in through the provider.

const orgRoute = sectionRoutes({ tag: 'Teams', backend: 'orgs-teams' });
const adminRoute = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });

const OWNERS = { on: 'target', permission: 'manage_owners:org', denied: 'org ownership required' } as const;
const SITE_ADMIN = { on: 'site', permission: 'admin:site' } as const;

/** As orgs-teams keeps them (its limit on a group value). */
const GROUP_VALUE_LIMIT = 255;
const Group = z
  .string()
  .min(1)
  .max(GROUP_VALUE_LIMIT)
  .meta({ description: "A value of the provider's group claim, compared exactly (Entra ID: the group's object id)" });

const GroupMappingJson = z
  .object({
    id: z.number().int(),
    group: z.string(),
    team: z
      .object({ id: z.number().int(), name: z.string() })
      .nullable()
      .meta({ description: 'The team the group places people in; null for a site-wide mapping' }),
    site_admin: z.boolean().meta({ description: 'Whether the group makes people site admin (site-wide mappings)' }),
    created_at: z.string().meta({ description: 'RFC 3339' }),
  })
  .meta({ id: 'GroupMapping' });

interface Mapping {
  id: number;
  group: string;
  teamId: number;
  teamName: string;
  siteAdmin: boolean;
  createdUnix: number;
}

const mappingJson = (m: Mapping): z.infer<typeof GroupMappingJson> => ({
  id: m.id,
  group: m.group,
  team: m.teamId ? { id: m.teamId, name: m.teamName } : null,
  site_admin: m.siteAdmin,
  created_at: new Date(m.createdUnix * 1000).toISOString(),
});

const Org = z.object({ orgname: p.login });
const OrgAndId = Org.extend({ id: p.id });
const unknownMapping = { status: 404, description: 'when the organization has no mapping of that id' } as const;

export const groupMappingRoutes = [
  orgRoute({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/group-mappings',
    summary: "The organization's single sign-on mappings of the provider's groups to its teams, by group",
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [OWNERS],
    response: { status: 200, schema: z.array(GroupMappingJson) },
    async handle(_input, { kept, target }) {
      const { mappings } = await kept.orgsTeams.identity.listGroupMappings({ orgId: target.id });
      return { body: mappings.map(mappingJson) };
    },
  }),
  orgRoute({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs/:orgname/group-mappings',
    summary:
      'Map a provider group to a team of the organization: at each sign-in through the provider, people whose groups name it join the team, and leave it once they no longer do',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [OWNERS],
    body: { schema: z.object({ group: Group, team_id: z.number().int().positive().meta({ description: 'A team of this organization' }) }) },
    response: { status: 201, schema: GroupMappingJson },
    errors: [
      { status: 409, description: 'when the group already maps to that team' },
      { status: 422, description: 'when the team is not one of the organization' },
    ],
    async handle({ body }, { backends, target }) {
      const m = await backends.orgsTeams.identity.createGroupMapping({ orgId: target.id, group: body.group, teamId: body.team_id });
      return { body: mappingJson(m) };
    },
  }),
  orgRoute({
    method: 'delete',
    scope: 'write:organization',
    path: '/orgs/:orgname/group-mappings/:id',
    summary: 'Remove a group mapping of the organization; people keep the team it gave until their next sign-in',
    auth: 'token',
    params: OrgAndId,
    target: orgInPath,
    requires: [OWNERS],
    response: { status: 204 },
    errors: [unknownMapping],
    async handle({ params }, { backends, target }) {
      await backends.orgsTeams.identity.deleteGroupMapping({ orgId: target.id, id: params.id });
      return {};
    },
  }),
  adminRoute({
    method: 'get',
    scope: 'read:admin',
    path: '/admin/group-mappings',
    summary: "The site-wide single sign-on mappings of the provider's groups to site admin (site admin)",
    auth: 'token',
    requires: [SITE_ADMIN],
    response: { status: 200, schema: z.array(GroupMappingJson) },
    async handle(_input, { kept }) {
      const { mappings } = await kept.orgsTeams.identity.listGroupMappings({ orgId: 0 });
      return { body: mappings.map(mappingJson) };
    },
  }),
  adminRoute({
    method: 'post',
    scope: 'write:admin',
    path: '/admin/group-mappings',
    summary:
      'Map a provider group to site admin (site admin): with any such mapping, people signing in through the provider are site admin exactly while one of their groups names one',
    auth: 'token',
    requires: [SITE_ADMIN],
    body: { schema: z.object({ group: Group }) },
    response: { status: 201, schema: GroupMappingJson },
    errors: [{ status: 409, description: 'when the group already maps to site admin' }],
    async handle({ body }, { backends }) {
      const m = await backends.orgsTeams.identity.createGroupMapping({ orgId: 0, group: body.group, teamId: 0 });
      return { body: mappingJson(m) };
    },
  }),
  adminRoute({
    method: 'delete',
    scope: 'write:admin',
    path: '/admin/group-mappings/:id',
    summary: 'Remove a site-wide group mapping (site admin)',
    auth: 'token',
    requires: [SITE_ADMIN],
    params: z.object({ id: p.id }),
    response: { status: 204 },
    errors: [{ status: 404, description: 'when there is no site-wide mapping of that id' }],
    async handle({ params }, { backends }) {
      await backends.orgsTeams.identity.deleteGroupMapping({ orgId: 0, id: params.id });
      return {};
    },
  }),
];
