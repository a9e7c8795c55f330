import { z } from 'zod';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import { OrganizationJson, orgJson } from '../organizations/presenters';

/** The spec's Team (section 2.2); `role_ids` only when custom roles are assigned. */
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
  };
}
