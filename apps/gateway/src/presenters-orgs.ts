import type { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';

/** The spec's Organization (section 2.2); `orgType` is 0 public, 1 limited, 2 private. */
export function orgJson(o: orgsTeamsOrgsV1.Organization) {
  return {
    id: o.id,
    username: o.username,
    full_name: o.fullName,
    avatar_url: o.avatarUrl,
    description: o.description,
    website: o.website,
    location: o.location,
    managerManagementClusterEndPoint: o.managerEndpoint,
    visibility: o.visibility,
    orgType: o.orgType,
  };
}

/** The spec's Team (section 2.2); `role_ids` only when custom roles are assigned. */
export function teamJson(t: orgsTeamsOrgsV1.Team) {
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

/** The spec's Profile (section 2.2) of a user. */
export function profileJson(u: orgsTeamsV1.User) {
  return {
    name: u.login,
    full_name: u.fullName,
    email: u.email,
    keep_email_private: false,
    website: u.website,
    location: u.location,
    language: u.language,
    description: u.description,
  };
}
