import { z } from 'zod';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import { OrganizationJson, orgJson } from '../identity/presenters';

/** The spec's Team; `role_ids` only when custom roles are assigned, `role_until` only when some are held until a time. */
export const TeamJson = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    organization: OrganizationJson.nullable(),
    permission: z.string(),
    units: z.array(z.string()).nullable(),
    units_map: z.record(z.string(), z.string()).meta({
      description:
        "Gitea's units_map: each of `units` with the access the team has to it (its permission: read, write, admin or owner; none for a custom team); {} without units",
    }),
    type: z.string(),
    role_ids: z.array(z.number().int()).optional(),
    role_until: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: 'role id to the RFC 3339 time the team holds that role until; roles held for good are absent' }),
  })
  .meta({ id: 'Team' });

/** Gitea's access modes a team may have on a unit; `custom` teams have their rights from roles, none from units. */
const UNIT_ACCESS = new Set(['read', 'write', 'admin', 'owner']);

/** Gitea's units_map: every unit the team names, with the team's permission as its access (one access for all here). */
function unitsMap(t: orgsTeamsOrgsV1.Team): Record<string, string> {
  const access = UNIT_ACCESS.has(t.permission) ? t.permission : 'none';
  return Object.fromEntries((t.hasUnits ? t.units : []).map((u) => [u, access]));
}

export function teamJson(t: orgsTeamsOrgsV1.Team): z.input<typeof TeamJson> {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    organization: t.organization ? orgJson(t.organization) : null,
    permission: t.permission,
    units: t.hasUnits ? t.units : null,
    units_map: unitsMap(t),
    type: t.type,
    ...(t.roleIds.length > 0 && { role_ids: t.roleIds }),
    ...(Object.keys(t.roleUntil).length > 0 && { role_until: t.roleUntil }),
  };
}
