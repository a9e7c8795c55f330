import { parse } from 'csv-parse/sync';
import { CliError } from './io';

// The import file (docs/import.md): organizations with their teams, members and custom roles, as JSON or as CSV, read
// into the shape POST /admin/orgs/import takes. Only the file's shape is checked here; the values (names, users,
// permissions) are the platform's to judge, per organization.

/** A team as the route takes it. */
export interface ImportTeam {
  name: string;
  description?: string;
  permission?: string;
  type?: string;
  members: string[];
  roles: string[];
}

/** A custom role as the route takes it. */
export interface ImportRole {
  name: string;
  description?: string;
  permissions: { namespace: string; action: string }[];
}

/** An organization as the route takes it. */
export interface ImportOrg {
  name: string;
  full_name?: string;
  description?: string;
  website?: string;
  location?: string;
  visibility?: string;
  owners: string[];
  teams: ImportTeam[];
  roles: ImportRole[];
}

export type ImportFormat = 'json' | 'csv';

/** The owner team's name: in CSV its rows list the owners. */
const OWNERS = 'owners';

/** The columns a CSV file may have; `organization` is required, the others as the row needs. */
export const CSV_COLUMNS = [
  'organization',
  'team',
  'username',
  'role',
  'permissions',
  'full_name',
  'description',
  'website',
  'location',
  'visibility',
  'team_description',
  'team_permission',
  'team_type',
  'role_description',
] as const;

/** The format a file is read as: the one asked for, else its extension's. */
export function formatOf(file: string, asked?: string): ImportFormat {
  const format = (asked ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'json')).toLowerCase();
  if (format !== 'json' && format !== 'csv') throw new CliError(`--format ${asked}: json or csv`, 64);
  return format;
}

/** The organizations of a file's text. */
export function readImportFile(text: string, format: ImportFormat): ImportOrg[] {
  return format === 'csv' ? fromCsv(text) : fromJson(text);
}

const strings = (v: unknown, where: string): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new CliError(`${where}: a list of strings`);
  return v as string[];
};
const optional = (v: unknown, where: string): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new CliError(`${where}: a string`);
  return v;
};
const objects = (v: unknown, where: string): Record<string, unknown>[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((o) => typeof o !== 'object' || o === null || Array.isArray(o)))
    throw new CliError(`${where}: a list of objects`);
  return v as Record<string, unknown>[];
};

/** `{"organizations": [...]}` (or the list alone), each as the route takes it. */
function fromJson(text: string): ImportOrg[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CliError(`the file is not JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(doc) ? doc : (doc as { organizations?: unknown })?.organizations;
  return objects(list ?? null, 'organizations').map((o, i) => {
    const at = `organizations[${i}]`;
    const name = optional(o.name, `${at}.name`);
    if (!name) throw new CliError(`${at}.name: required`);
    return {
      name,
      full_name: optional(o.full_name, `${at}.full_name`),
      description: optional(o.description, `${at}.description`),
      website: optional(o.website, `${at}.website`),
      location: optional(o.location, `${at}.location`),
      visibility: optional(o.visibility, `${at}.visibility`),
      owners: strings(o.owners, `${at}.owners`),
      teams: objects(o.teams, `${at}.teams`).map((t, j) => {
        const tat = `${at}.teams[${j}]`;
        return {
          name: optional(t.name, `${tat}.name`) ?? '',
          description: optional(t.description, `${tat}.description`),
          permission: optional(t.permission, `${tat}.permission`),
          type: optional(t.type, `${tat}.type`),
          members: strings(t.members, `${tat}.members`),
          roles: strings(t.roles, `${tat}.roles`),
        };
      }),
      roles: objects(o.roles, `${at}.roles`).map((r, j) => {
        const rat = `${at}.roles[${j}]`;
        return {
          name: optional(r.name, `${rat}.name`) ?? '',
          description: optional(r.description, `${rat}.description`),
          permissions: permissionsOf(r.permissions, `${rat}.permissions`),
        };
      }),
    };
  });
}

/** Permissions as `[{namespace, action}]` or as `"namespace/action"` strings. */
function permissionsOf(v: unknown, where: string): ImportRole['permissions'] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new CliError(`${where}: a list`);
  return v.map((p, i) => {
    if (typeof p === 'string') return splitPermission(p, `${where}[${i}]`);
    const { namespace, action } = (p ?? {}) as { namespace?: unknown; action?: unknown };
    if (typeof namespace !== 'string' || typeof action !== 'string')
      throw new CliError(`${where}[${i}]: {namespace, action} or "namespace/action"`);
    return { namespace, action };
  });
}

function splitPermission(p: string, where: string): { namespace: string; action: string } {
  const slash = p.indexOf('/');
  if (slash <= 0 || slash === p.length - 1) throw new CliError(`${where}: "${p}" is not namespace/action`);
  return { namespace: p.slice(0, slash), action: p.slice(slash + 1) };
}

/**
 * One fact a row, with a header naming its columns (CSV_COLUMNS): `organization` alone (or with its fields) names the
 * organization; with `team` and `username`, a member of that team (of `Owners`: an owner); with `team` and `role`, a
 * role assigned to the team; `role` with `permissions` (space-separated `namespace/action`) and no team defines the
 * role. A field given on several rows must not differ.
 */
function fromCsv(text: string): ImportOrg[] {
  let rows: Record<string, string>[];
  try {
    rows = parse(text, { columns: true, skip_empty_lines: true, trim: true, bom: true });
  } catch (err) {
    throw new CliError(`the file is not CSV: ${(err as Error).message}`);
  }
  const header = rows.length ? Object.keys(rows[0]) : [];
  const unknown = header.filter((c) => !(CSV_COLUMNS as readonly string[]).includes(c));
  if (unknown.length) throw new CliError(`unknown column ${unknown.join(', ')}; the columns are ${CSV_COLUMNS.join(', ')}`);
  if (rows.length && !header.includes('organization')) throw new CliError('the header names no organization column');

  const orgs = new Map<string, ImportOrg>();
  const set = <T extends object>(into: T, field: keyof T & string, value: string | undefined, line: number) => {
    if (!value) return;
    const had = into[field] as unknown as string | undefined;
    if (had !== undefined && had !== value) throw new CliError(`line ${line}: ${field} "${value}" differs from "${had}" given before`);
    (into as Record<string, unknown>)[field] = value;
  };
  rows.forEach((row, i) => {
    const line = i + 2;
    const name = row.organization;
    if (!name) throw new CliError(`line ${line}: no organization`);
    let org = orgs.get(name.toLowerCase());
    if (!org) orgs.set(name.toLowerCase(), (org = { name, owners: [], teams: [], roles: [] }));
    for (const f of ['full_name', 'description', 'website', 'location', 'visibility'] as const) set(org, f, row[f], line);

    if (row.team && row.team.toLowerCase() === OWNERS) {
      if (row.role) throw new CliError(`line ${line}: the owner team carries no custom roles`);
      if (row.username) org.owners.push(row.username);
      return;
    }
    if (row.team) {
      let team = org.teams.find((t) => t.name.toLowerCase() === row.team.toLowerCase());
      if (!team) org.teams.push((team = { name: row.team, members: [], roles: [] }));
      set(team, 'description', row.team_description, line);
      set(team, 'permission', row.team_permission, line);
      set(team, 'type', row.team_type, line);
      if (row.username) team.members.push(row.username);
      if (row.role && !team.roles.includes(row.role)) team.roles.push(row.role);
      if (row.permissions) throw new CliError(`line ${line}: permissions define a role on a row without a team`);
      return;
    }
    if (row.username) throw new CliError(`line ${line}: a username needs a team (Owners for an owner)`);
    if (row.role) {
      let role = org.roles.find((r) => r.name.toLowerCase() === row.role.toLowerCase());
      if (!role) org.roles.push((role = { name: row.role, permissions: [] }));
      set(role, 'description', row.role_description, line);
      for (const p of (row.permissions ?? '').split(/\s+/).filter(Boolean)) role.permissions.push(splitPermission(p, `line ${line}`));
    }
  });
  return [...orgs.values()];
}

/** The memberships an organization adds (its owners and its teams' members), the unit progress is counted in. */
export const membershipsOf = (org: ImportOrg) => Math.max(1, org.owners.length) + org.teams.reduce((n, t) => n + t.members.length, 0);

/**
 * The file cut into batches of whole organizations, each of at most `memberships` memberships (an organization larger
 * than that goes alone), `maxOrgs` organizations and `maxBytes` of JSON, so each fits one request.
 */
export function batchesOf(orgs: ImportOrg[], memberships: number, maxOrgs = 500, maxBytes = 768 * 1024): ImportOrg[][] {
  const batches: ImportOrg[][] = [];
  let batch: ImportOrg[] = [];
  let count = 0;
  let bytes = 0;
  for (const org of orgs) {
    const n = membershipsOf(org);
    const size = JSON.stringify(org).length + 1;
    if (batch.length && (count + n > memberships || batch.length >= maxOrgs || bytes + size > maxBytes)) {
      batches.push(batch);
      batch = [];
      count = 0;
      bytes = 0;
    }
    batch.push(org);
    count += n;
    bytes += size;
  }
  if (batch.length) batches.push(batch);
  return batches;
}
