import type { orgsTeamsOrgsV1 } from '@platform/proto';
import { visibilityName } from './visibility';

/** The organization columns of an account row. */
export interface OrgRow {
  id: number;
  login: string;
  full_name: string;
  avatar_url: string;
  description: string;
  website: string;
  location: string;
  manager_endpoint: string;
  visibility: number;
  /** The contact address (accounts.email; organizations keep lower_email null, so it is not unique). */
  email: string;
  /** One more at each edit of these fields (Organization.version). */
  version: number;
}

/** The columns an organization is read with (OrgRow), not the password and login columns of the account row. */
export const ORG_COLUMNS = [
  'id',
  'login',
  'full_name',
  'avatar_url',
  'description',
  'website',
  'location',
  'manager_endpoint',
  'visibility',
  'email',
  'version',
];

export interface TeamRow {
  id: number;
  org_id: number;
  name: string;
  lower_name: string;
  description: string;
  permission: string;
  type: string;
  units: string[] | null;
  created_at: Date;
  updated_at: Date;
}

/** The permission of the one owner team of every organization. */
export const OWNER_PERMISSION = 'owner';
export const OWNER_TEAM_NAME = 'Owners';

/** The Organization message of an account row. */
export function toOrganization(row: OrgRow): orgsTeamsOrgsV1.Organization {
  return {
    id: row.id,
    username: row.login,
    fullName: row.full_name,
    avatarUrl: row.avatar_url,
    description: row.description,
    website: row.website,
    location: row.location,
    managerEndpoint: row.manager_endpoint,
    visibility: visibilityName(row.visibility),
    orgType: row.visibility,
    email: row.email ?? '',
    version: row.version,
  };
}

/** The account row of an Organization message (an organization's row a notice brings): toOrganization undone. */
export function fromOrganization(org: orgsTeamsOrgsV1.Organization): OrgRow {
  return {
    id: org.id,
    login: org.username,
    full_name: org.fullName,
    avatar_url: org.avatarUrl,
    description: org.description,
    website: org.website,
    location: org.location,
    manager_endpoint: org.managerEndpoint,
    visibility: org.orgType,
    email: org.email,
    version: org.version,
  };
}

/** The Team message of a team row, its organization and its custom roles. */
export function toTeam(row: TeamRow, org: OrgRow, roleIds: number[] = [], roleUntil: Record<number, string> = {}): orgsTeamsOrgsV1.Team {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    organization: toOrganization(org),
    permission: row.permission,
    units: row.units ?? [],
    hasUnits: row.units !== null,
    type: row.type,
    roleIds,
    roleUntil,
  };
}
