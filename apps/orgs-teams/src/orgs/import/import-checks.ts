import type { orgsTeamsImportV1 } from '@platform/proto';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import { OWNER_TEAM_NAME } from '../rows';
import { CREATE_PERMISSIONS, TEAM_TYPES } from '../teams';
import { VISIBILITIES } from '../visibility';

/** Gitea's rule for account names, which organization slugs share with logins (as organizations.ts). */
const SLUG = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/;
/** Gitea's team-name rule (as teams.ts). */
const TEAM_NAME = /^[a-zA-Z0-9_.-]{1,255}$/;
/** A custom role's limits, as authz checks them (docs/custom-roles.md). */
const ROLE_NAME_MAX = 255;
const ROLE_DESCRIPTION_MAX = 255;

/** The team type an imported team gets when the file names none. */
export const DEFAULT_TEAM_TYPE = 'general';
/** The permission an imported team gets when the file names none, as POST /orgs/{org}/teams. */
export const DEFAULT_TEAM_PERMISSION = 'read';

/** The permissions custom roles may carry (authz's catalog), as `namespace/action`. */
export type Catalog = Set<string>;
export const permissionKey = (p: { namespace: string; action: string }) => `${p.namespace}/${p.action}`;

/** The logins an organization names (owners and members), lower-cased, without repeats. */
export function loginsOf(org: orgsTeamsImportV1.ImportedOrg): string[] {
  return [...new Set([...org.owners, ...org.teams.flatMap((t) => t.members)].map((l) => l.toLowerCase()))];
}

const tooLong = (field: string, value: string, max: number) => (value.length > max ? [`${field}: at most ${max} characters`] : []);

/**
 * What is wrong with an organization of the file, each problem naming the value at fault; empty when it may be
 * imported. Names the database must answer (users, taken slugs) are checked apart (org-import.ts).
 */
export function problemsOf(org: orgsTeamsImportV1.ImportedOrg, catalog: Catalog | undefined): string[] {
  const problems: string[] = [];
  if (!SLUG.test(org.name)) problems.push(`name "${org.name}": letters, digits, ".", "_" or "-" inside; at most 40 characters`);
  problems.push(
    ...tooLong('full_name', org.fullName, L.fullName),
    ...tooLong('description', org.description, L.description),
    ...tooLong('website', org.website, L.website),
    ...tooLong('location', org.location, L.location),
  );
  if (org.visibility && !(VISIBILITIES as readonly string[]).includes(org.visibility))
    problems.push(`visibility "${org.visibility}": one of ${VISIBILITIES.join(', ')}`);
  for (const login of org.owners) if (!login) problems.push('owners: an empty login');

  const roleNames = new Set<string>();
  for (const role of org.roles) {
    const name = role.name.trim();
    if (!name) problems.push('roles: a role without a name');
    else if (roleNames.has(name.toLowerCase())) problems.push(`role "${role.name}": named twice`);
    roleNames.add(name.toLowerCase());
    problems.push(...tooLong(`role "${role.name}" name`, role.name, ROLE_NAME_MAX));
    problems.push(...tooLong(`role "${role.name}" description`, role.description, ROLE_DESCRIPTION_MAX));
    const unknown = role.permissions.filter((p) => !catalog?.has(permissionKey(p))).map(permissionKey);
    if (unknown.length)
      problems.push(`role "${role.name}": permission ${unknown.join(', ')} is unknown or cannot be assigned to a custom role`);
  }

  const teamNames = new Set<string>();
  for (const team of org.teams) {
    const label = `team "${team.name}"`;
    if (!TEAM_NAME.test(team.name)) problems.push(`${label}: 1 to 255 letters, digits, "_", "." or "-"`);
    else if (team.name.toLowerCase() === OWNER_TEAM_NAME.toLowerCase())
      problems.push(`${label}: the owner team is made by the import; list its members in owners`);
    else if (teamNames.has(team.name.toLowerCase())) problems.push(`${label}: named twice`);
    teamNames.add(team.name.toLowerCase());
    problems.push(...tooLong(`${label} description`, team.description, L.description));
    if (team.permission && !(CREATE_PERMISSIONS as readonly string[]).includes(team.permission))
      problems.push(`${label}: permission "${team.permission}" is not one of ${CREATE_PERMISSIONS.join(', ')}`);
    if (team.type && !(TEAM_TYPES as readonly string[]).includes(team.type))
      problems.push(`${label}: type "${team.type}" is not one of ${TEAM_TYPES.join(', ')}`);
    if (team.members.some((m) => !m)) problems.push(`${label}: an empty login among its members`);
    const undefinedRoles = team.roles.filter((r) => !roleNames.has(r.trim().toLowerCase()));
    if (undefinedRoles.length)
      problems.push(`${label}: role ${undefinedRoles.map((r) => `"${r}"`).join(', ')} is not among the organization's roles`);
  }
  return problems;
}
