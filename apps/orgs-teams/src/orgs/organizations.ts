import { isUniqueViolation } from '@platform/db';
import { ConflictError, NotAllowedError, NotFoundError, ValidationError } from '@platform/errors';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { ACCOUNT_TYPE } from '../identity/identity';
import { isOrgMember, isSiteAdmin, orgById, orgByName, userAccount, type OrgsContext } from './accounts';
import { EFFECT, stageTuples } from './effects';
import type { OrgAuthz } from './org-authz';
import { OWNER_PERMISSION, OWNER_TEAM_NAME, toOrganization, type OrgRow, type TeamRow } from './rows';
import { orgOnSite, ownerTeamOfOrg, teamMember, teamOfOrg } from './tuples';
import { canSee, requestedVisibility } from './visibility';

/** Gitea's rule for account names, which organization slugs share with logins. */
const SLUG = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/;

/** The type the owner team gets: it spans the whole organization. */
const OWNER_TEAM_TYPE = 'general';

/** Organizations: create (with the owner team), read as a viewer may, edit, delete. */
export class Organizations {
  constructor(
    private readonly orgs: OrgsContext,
    private readonly authz: OrgAuthz,
  ) {}

  private get db() {
    return this.orgs.db;
  }

  /** Creates the organization, its owner team `Owners` and the creator's membership, then their tuples. */
  async create(req: orgsTeamsOrgsV1.CreateOrgRequest, ctx: CallContext): Promise<orgsTeamsOrgsV1.Organization> {
    if (!SLUG.test(req.username)) {
      const description = 'letters, digits, ".", "_" or "-" inside; at most 40 characters';
      throw new ValidationError(`username: ${description}`, [{ field: 'username', description }]);
    }
    const visibility = requestedVisibility(req.orgType, req.visibility) ?? 0;
    const creator = await userAccount(this.db, { id: req.creatorId });
    if (await this.db.table('accounts').where({ lower_login: req.username.toLowerCase() }).first('id'))
      throw new ConflictError(`the name ${req.username} is already taken`);

    const created = await this.orgs.outbox
      .run(
        async (trx, stage) => {
          const [org] = await this.db
            .table('accounts', trx)
            .insert({
              type: ACCOUNT_TYPE.organization,
              login: req.username,
              lower_login: req.username.toLowerCase(),
              full_name: req.fullName,
              description: req.description,
              website: req.website,
              location: req.location,
              manager_endpoint: req.managerEndpoint,
              visibility,
            })
            .returning('*');
          const [team] = await this.db
            .table('teams', trx)
            .insert({
              org_id: org.id,
              name: OWNER_TEAM_NAME,
              lower_name: OWNER_TEAM_NAME.toLowerCase(),
              description: 'Owners of the organization',
              permission: OWNER_PERMISSION,
              type: OWNER_TEAM_TYPE,
            })
            .returning('*');
          await this.db.table('team_users', trx).insert({ team_id: team.id, org_id: org.id, uid: creator.id });
          await this.db.table('org_users', trx).insert({ org_id: org.id, uid: creator.id, is_public: false });
          stageTuples(stage, [
            orgOnSite(org.id),
            ...teamOfOrg(org.id, team.id),
            ownerTeamOfOrg(org.id, team.id),
            teamMember(team.id, creator.id),
          ]);
          return { org: org as OrgRow, team: team as TeamRow };
        },
        // Teams and memberships go with the account (on delete cascade).
        { call: ctx, undo: (trx, { org }) => this.db.table('accounts', trx).where({ id: org.id }).delete() },
      )
      .catch((err) => {
        if (isUniqueViolation(err)) throw new ConflictError(`the name ${req.username} is already taken`);
        throw err;
      });
    return toOrganization(created.org);
  }

  /** The organization behind a slug as the viewer (0: anonymous) may see it; 404 when unknown or invisible. */
  async get(name: string, viewerId: number): Promise<orgsTeamsOrgsV1.Organization> {
    const org = await orgByName(this.db, name);
    if (!org || !(await this.visibleTo(org, viewerId))) throw new NotFoundError(`organization ${name} does not exist`);
    return toOrganization(org);
  }

  /** Whether a viewer (0: anonymous) may see an organization. */
  async visibleTo(org: OrgRow, viewerId: number): Promise<boolean> {
    if (org.visibility === 0) return true;
    return canSee(org.visibility, {
      signedIn: viewerId > 0,
      member: await isOrgMember(this.db, org.id, viewerId),
      siteAdmin: await isSiteAdmin(this.db, viewerId),
    });
  }

  /** Changes the supplied fields. */
  async edit(req: orgsTeamsOrgsV1.EditOrgRequest): Promise<orgsTeamsOrgsV1.Organization> {
    await orgById(this.db, req.orgId);
    const changes: Partial<OrgRow> = {};
    if (req.fullName !== undefined) changes.full_name = req.fullName;
    if (req.description !== undefined) changes.description = req.description;
    if (req.website !== undefined) changes.website = req.website;
    if (req.location !== undefined) changes.location = req.location;
    if (req.managerEndpoint !== undefined) changes.manager_endpoint = req.managerEndpoint;
    const visibility = requestedVisibility(req.orgType, req.visibility);
    if (visibility !== undefined) changes.visibility = visibility;
    if (Object.keys(changes).length > 0) await this.db.table('accounts').where({ id: req.orgId }).update(changes);
    return toOrganization(await orgById(this.db, req.orgId));
  }

  /**
   * Deletes the organization with its teams and memberships. An owner may do so only as the last owner
   * (403 while other owners remain); a site admin who is not an owner always may. The rows go in one
   * transaction that locks the organization first, so of concurrent deletes one wins and the others find
   * nothing (404); its tuples, custom roles and stored avatar follow through the outbox.
   */
  async delete(orgId: number, requesterId: number, ctx: CallContext): Promise<void> {
    await this.orgs.outbox.run(
      async (trx, stage) => {
        const org: OrgRow | undefined = await this.db
          .table('accounts', trx)
          .where({ id: orgId, type: ACCOUNT_TYPE.organization })
          .forUpdate()
          .first();
        if (!org) throw new NotFoundError(`organization ${orgId} does not exist`);
        const teams: TeamRow[] = await this.db.table('teams', trx).where({ org_id: orgId });
        const ownerTeam = teams.find((t) => t.permission === OWNER_PERMISSION)!;
        const members: { team_id: number; uid: number }[] = await this.db.table('team_users', trx).where({ org_id: orgId });
        const owners = members.filter((m) => m.team_id === ownerTeam.id).map((m) => m.uid);
        if (owners.includes(requesterId)) {
          if (owners.length > 1)
            throw new NotAllowedError(
              `only the last owner may delete organization ${org.login}; ${owners.length - 1} other owner(s) remain in the ${ownerTeam.name} team`,
            );
        } else if (!(await isSiteAdmin(this.db, requesterId, trx))) {
          throw new NotAllowedError(`only an owner of ${org.login} or a site admin may delete it`);
        }
        await this.orgs.onOrgDelete?.(trx, orgId, stage);
        // Teams, memberships and the avatar row go with the account (on delete cascade).
        await this.db.table('accounts', trx).where({ id: orgId }).delete();
        stageTuples(stage, [
          orgOnSite(orgId),
          ...teams.flatMap((t) => teamOfOrg(orgId, t.id)),
          ownerTeamOfOrg(orgId, ownerTeam.id),
          ...members.map((m) => teamMember(m.team_id, m.uid)),
        ]);
        stage(EFFECT.orgRolesDeleted, { orgId });
      },
      { call: ctx },
    );
  }
}
