import { ConflictError, NotFoundError, ValidationError } from '@platform/errors';
import { isUniqueViolation, type Database } from '@platform/db';

/** The longest group value kept; Keycloak's full group paths and Entra's object ids fit well within it. */
export const GROUP_VALUE_LIMIT = 255;

/** A mapping as the RPCs answer it; org 0 and team 0 for a site-wide one. */
export interface GroupMapping {
  id: number;
  orgId: number;
  group: string;
  teamId: number;
  teamName: string;
  siteAdmin: boolean;
  createdUnix: number;
}

interface Row {
  id: string | number;
  org_id: string | number | null;
  group_value: string;
  team_id: string | number | null;
  team_name: string | null;
  site_admin: boolean;
  created_at: Date;
}

/**
 * The groups-to-teams mappings as the API keeps them (docs/authentication.md, "Groups to teams"): an organization's
 * map a group to one of its teams; the site-wide ones (org 0) map a group to site admin. Applying them at sign-in is
 * GroupMappings' work.
 */
export class GroupMappingStore {
  constructor(private readonly db: Database) {}

  async list(orgId: number): Promise<GroupMapping[]> {
    if (orgId) await this.organization(orgId);
    const rows: Row[] = await this.query(orgId).orderBy([{ column: 'g.group_value' }, { column: 'g.id' }]);
    return rows.map(toMapping);
  }

  async create(orgId: number, group: string, teamId: number): Promise<GroupMapping> {
    if (!group.trim()) throw new ValidationError('group must not be empty', [{ field: 'group', description: 'empty' }]);
    if (group.length > GROUP_VALUE_LIMIT)
      throw new ValidationError(`group must be at most ${GROUP_VALUE_LIMIT} characters`, [{ field: 'group', description: 'too long' }]);
    let row: Record<string, unknown>;
    if (orgId) {
      await this.organization(orgId);
      // A team of another organization is answered as an unknown one, so that its existence is not told.
      const team = teamId ? await this.db.table('teams').where({ id: teamId, org_id: orgId }).first('id') : undefined;
      if (!team)
        throw new ValidationError(`team ${teamId} is not a team of this organization`, [{ field: 'team_id', description: 'unknown team' }]);
      row = { org_id: orgId, group_value: group, team_id: teamId, site_admin: false };
    } else {
      if (teamId) throw new ValidationError('a site-wide mapping names no team', [{ field: 'team_id', description: 'not allowed' }]);
      row = { org_id: null, group_value: group, team_id: null, site_admin: true };
    }
    let id: number;
    try {
      const [inserted] = await this.db.table('group_mappings').insert(row).returning('id');
      id = Number((inserted as { id: string | number }).id);
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError(orgId ? `group "${group}" already maps to that team` : `group "${group}" already maps to site admin`);
      throw err;
    }
    const created: Row | undefined = await this.query(orgId).where('g.id', id).first();
    return toMapping(created!);
  }

  async delete(orgId: number, id: number): Promise<void> {
    const q = this.db.table('group_mappings').where({ id });
    const n = await (orgId ? q.andWhere({ org_id: orgId }) : q.whereNull('org_id')).delete();
    if (!n) throw new NotFoundError(`group mapping ${id} does not exist`);
  }

  private query(orgId: number) {
    const q = this.db
      .table('group_mappings as g')
      .leftJoin('teams as t', 't.id', 'g.team_id')
      .select('g.id', 'g.org_id', 'g.group_value', 'g.team_id', 't.name as team_name', 'g.site_admin', 'g.created_at');
    return orgId ? q.where('g.org_id', orgId) : q.whereNull('g.org_id');
  }

  private async organization(orgId: number): Promise<void> {
    const org = await this.db.table('accounts').where({ id: orgId, type: 1 }).first('id');
    if (!org) throw new NotFoundError(`organization ${orgId} does not exist`);
  }
}

function toMapping(r: Row): GroupMapping {
  return {
    id: Number(r.id),
    orgId: Number(r.org_id ?? 0),
    group: r.group_value,
    teamId: Number(r.team_id ?? 0),
    teamName: r.team_name ?? '',
    siteAdmin: r.site_admin,
    createdUnix: Math.floor(new Date(r.created_at).getTime() / 1000),
  };
}
