import { z } from 'zod';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import { OrganizationJson, orgJson } from '../organizations/presenters';

/** The spec's Team; `role_ids` only when custom roles are assigned, `role_until` only when some are held until a time. */
export const TeamJson = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    organization: OrganizationJson.nullable(),
    permission: z.string(),
    units: z.array(z.string()).nullable(),
    type: z.string(),
    role_ids: z.array(z.number().int()).optional(),
    role_until: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: 'role id to the RFC 3339 time the team holds that role until; roles held for good are absent' }),
  })
  .meta({ id: 'Team' });

export function teamJson(t: orgsTeamsOrgsV1.Team): z.input<typeof TeamJson> {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    organization: t.organization ? orgJson(t.organization) : null,
    permission: t.permission,
    units: t.hasUnits ? t.units : null,
    type: t.type,
    ...(t.roleIds.length > 0 && { role_ids: t.roleIds }),
    ...(Object.keys(t.roleUntil).length > 0 && { role_until: t.roleUntil }),
  };
}
