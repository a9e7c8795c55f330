import type { Knex } from 'knex';
import { isUniqueViolation, type StageEffect } from '@platform/db';
import { ConflictError, InputError, NotAllowedError, NotFoundError, ValidationError } from '@platform/errors';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { EFFECT, orgCreated, stageTuples } from './effects';
import { ACCOUNT_TYPE } from '../identity/identity';
import { MembersStore, notAUser } from './members-store';
import type { OrgAuthz } from './org-authz';
import { OrganizationsStore, type OrgFields } from './organizations-store';
import type { OrgsContext } from './orgs-context';
import { OWNER_PERMISSION, OWNER_TEAM_NAME, toOrganization, type OrgRow } from './rows';
import { TeamsStore } from './teams-store';
import { orgOnSite, ownerTeamOfOrg, teamMember, teamOfOrg } from './tuples';
import { canSee, requestedVisibility } from './visibility';

/** Gitea's rule for account names, which organization slugs share with logins. */
const SLUG = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/;

/** Team permissions as Gitea's access modes, lowest to highest; `none` gives nothing. */
const TEAM_LEVELS: Record<string, number> = { none: 0, read: 1, custom: 1, write: 2, admin: 3, owner: 4 };

/** The type the owner team gets: it spans the whole organization. */
const OWNER_TEAM_TYPE = 'general';

/** Nothing was created: the creator is not a user (which `MembersStore.user` tells apart). */
class CreatorNotAUser extends Error {}

/** Organizations: create (with the owner team), read as a viewer may, edit, delete. */
export class Organizations {
  private readonly organizations: OrganizationsStore;
  private readonly teams: TeamsStore;
  private readonly members: MembersStore;

  constructor(
    private readonly orgs: OrgsContext,
    private readonly authz: OrgAuthz,
  ) {
    this.organizations = OrganizationsStore.create(orgs.db, orgs.cache);
    this.teams = TeamsStore.create(orgs.db);
    this.members = MembersStore.create(orgs.db);
  }

  /** Creates the organization, its owner team `Owners` and the creator's membership, then their tuples. */
  async create(req: orgsTeamsOrgsV1.CreateOrgRequest, ctx: CallContext): Promise<orgsTeamsOrgsV1.Organization> {
    if (!SLUG.test(req.username)) {
      const description = 'letters, digits, ".", "_" or "-" inside; at most 40 characters';
      throw new ValidationError(`username: ${description}`, [{ field: 'username', description }]);
    }
    const visibility = requestedVisibility(req.orgType, req.visibility) ?? 0;
    // The caller's audit event goes with the rows when nothing can undo them after the commit: their tuples too.
    const audit = this.orgs.tuplesInStatement ? req.audit : undefined;
    // Neither the creator nor the name is read first: the one statement that writes the rows inserts nothing for a
    // creator who is not a user (read then, to tell why), and a taken name is its unique violation.
    const created = await this.orgs.outbox
      .runInOne(
        async (entry) => {
          const owned = await this.organizations.insertOwned(
            req.username,
            {
              full_name: req.fullName,
              description: req.description,
              website: req.website,
              location: req.location,
              manager_endpoint: req.managerEndpoint,
              visibility,
              email: req.email ?? '',
            },
            { name: OWNER_TEAM_NAME, description: 'Owners of the organization', permission: OWNER_PERMISSION, type: OWNER_TEAM_TYPE },
            req.creatorId,
            entry,
            // Its tuples written by the statement itself leave nothing to do after the commit.
            (made) => (this.orgs.tuplesInStatement ? [] : [orgCreated({ ...made, creatorId: req.creatorId })]),
            this.orgs.tuplesInStatement,
            audit,
          );
          if (!owned) throw new CreatorNotAUser();
          return { result: owned.org, row: owned.row };
        },
        // Teams and memberships go with the account (on delete cascade).
        { call: ctx, undo: (trx, org) => this.organizations.delete(org.id, trx) },
      )
      .catch(async (err) => {
        // An undone creation had committed, so a read may have kept it meanwhile: its insert recorded it, so the call's
        // announcement (changes.ts) tells the readers, failed or not.
        if (isUniqueViolation(err)) throw new ConflictError(`the name ${req.username} is already taken`);
        if (err instanceof CreatorNotAUser) {
          await this.members.user({ id: req.creatorId });
          throw new NotFoundError(`user ${req.creatorId} does not exist`);
        }
        throw err;
      });
    return { ...toOrganization(created), ...(audit && { auditRecorded: true }) };
  }

  /** The organization behind a slug as the viewer (0: anonymous) may see it; 404 when unknown or invisible. */
  async get(name: string, viewerId: number): Promise<orgsTeamsOrgsV1.Organization> {
    const org = await this.organizations.findByName(name);
    if (!org || !(await this.visibleTo(org, viewerId))) throw new NotFoundError(`organization ${name} does not exist`);
    return toOrganization(org);
  }

  /**
   * A request that names an organization by id or by name (`org_id`, `org_name`), with the id filled in, as the
   * viewer may see the organization: one it may not see is as unknown as one that does not exist, so a name never
   * tells more than GetOrg would. Both given must name the same organization; neither is left as it is (the
   * method answers what it answers for no organization).
   */
  async byIdOrName<R extends { orgId: number; orgName?: string }>(request: R, viewerId: number | 'app'): Promise<R> {
    if (!request.orgName) return request;
    const org = await this.organizations.findByName(request.orgName);
    if (!org || (viewerId !== 'app' && !(await this.visibleTo(org, viewerId))))
      throw new NotFoundError(`organization ${request.orgName} does not exist`);
    if (request.orgId && request.orgId !== org.id)
      throw new InputError('org_id and org_name name different organizations', [
        { field: 'org_name', description: `is organization ${org.id}, not ${request.orgId}` },
      ]);
    return { ...request, orgId: org.id };
  }

  /** GetOrg's request with the name filled in when it gives the id alone; 404 as `byIdOrName`. */
  async nameOf(request: orgsTeamsOrgsV1.GetOrgRequest, viewerId: number | 'app'): Promise<orgsTeamsOrgsV1.GetOrgRequest> {
    if (!request.orgId) return request;
    const org = await this.organizations.find(request.orgId);
    if (!org || (viewerId !== 'app' && !(await this.visibleTo(org, viewerId))))
      throw new NotFoundError(`organization ${request.orgId} does not exist`);
    if (request.name && request.name.toLowerCase() !== org.login.toLowerCase())
      throw new InputError('name and org_id name different organizations', [
        { field: 'name', description: `organization ${request.orgId} is ${org.login}` },
      ]);
    return { ...request, name: org.login };
  }

  /** Whether a viewer (0: anonymous) may see an organization. */
  async visibleTo(org: OrgRow, viewerId: number): Promise<boolean> {
    if (org.visibility === 0) return true;
    return canSee(org.visibility, {
      signedIn: viewerId > 0,
      member: await this.members.isOrgMember(org.id, viewerId),
      siteAdmin: await this.members.isSiteAdmin(viewerId),
    });
  }

  /** One page of the organizations the viewer (0: anonymous) may see, by name. */
  async list(req: orgsTeamsOrgsV1.ListOrgsRequest): Promise<orgsTeamsOrgsV1.ListOrgsResponse> {
    const viewer = { id: req.viewerId, siteAdmin: await this.members.isSiteAdmin(req.viewerId) };
    const { rows, total } = await this.organizations.listVisible(viewer, req.page);
    return { orgs: rows.map(toOrganization), total };
  }

  /** One page of a user's organizations as the viewer may see them (all of them for the user and site admins). */
  async listOfUser(req: orgsTeamsOrgsV1.ListUserOrgsRequest): Promise<orgsTeamsOrgsV1.ListOrgsResponse> {
    const user = await this.members.person({ id: req.userId, login: req.username });
    if (user.type === ACCOUNT_TYPE.serviceAccount) {
      // A service account asking for its own: the organization it belongs to (a member without teams), none for a
      // site-wide one. Asked about by anyone else, it is not a user.
      if (user.id !== req.viewerId) throw notAUser(user);
      const own = user.service_account_org_id;
      const { rows, total } = await this.organizations.listOwn(own === null ? null : Number(own), req.page);
      return { orgs: rows.map(toOrganization), total };
    }
    const viewer = { id: req.viewerId, siteAdmin: await this.members.isSiteAdmin(req.viewerId) };
    const all = viewer.siteAdmin || (viewer.id > 0 && viewer.id === user.id);
    const { rows, total } = await this.organizations.listOfUser(user.id, viewer, all, req.page);
    return { orgs: rows.map(toOrganization), total };
  }

  /**
   * What a user may do in an organization, as Gitea's OrganizationPermissions: the highest permission among
   * their teams, each level implying those below. A `custom` team (rights from custom roles) counts as read.
   */
  async permissions(req: orgsTeamsOrgsV1.GetOrgPermissionsRequest): Promise<orgsTeamsOrgsV1.OrgPermissions> {
    await this.organizations.get(req.orgId);
    const user = await this.members.user({ id: req.userId, login: req.username });
    const levels = (await this.members.teamPermissionsOf(req.orgId, user.id)).map((p) => TEAM_LEVELS[p] ?? 0);
    const level = Math.max(0, ...levels);
    return {
      isOwner: level >= TEAM_LEVELS.owner,
      isAdmin: level >= TEAM_LEVELS.admin,
      canWrite: level >= TEAM_LEVELS.write,
      canRead: level >= TEAM_LEVELS.read,
      canCreateRepository: level >= TEAM_LEVELS.owner,
    };
  }

  /** Changes the supplied fields. */
  async edit(req: orgsTeamsOrgsV1.EditOrgRequest): Promise<orgsTeamsOrgsV1.Organization> {
    // Nothing is read first: the update itself answers 404 for an unknown organization. A kept read here would wait for
    // the notice stream to catch up (a question to NATS) on every edit, for an answer the update gives anyway.
    const changes: Partial<OrgFields> = {};
    if (req.fullName !== undefined) changes.full_name = req.fullName;
    if (req.description !== undefined) changes.description = req.description;
    if (req.website !== undefined) changes.website = req.website;
    if (req.location !== undefined) changes.location = req.location;
    if (req.managerEndpoint !== undefined) changes.manager_endpoint = req.managerEndpoint;
    if (req.email !== undefined) changes.email = req.email;
    const visibility = requestedVisibility(req.orgType, req.visibility);
    if (visibility !== undefined) changes.visibility = visibility;
    // The update answers the row it changed, not read again after (404 should it be gone meanwhile); nothing undoes an
    // edit, so the caller's audit event goes with it.
    if (Object.keys(changes).length > 0)
      return { ...toOrganization(await this.organizations.edit(req.orgId, changes, req.audit)), ...(req.audit && { auditRecorded: true }) };
    return toOrganization(await this.organizations.get(req.orgId));
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
        const org = await this.organizations.find(orgId, trx, true);
        if (!org) throw new NotFoundError(`organization ${orgId} does not exist`);
        const teams = await this.teams.ofOrg(orgId, trx);
        const ownerTeam = teams.find((t) => t.permission === OWNER_PERMISSION)!;
        const members = await this.members.teamMemberships(orgId, trx);
        const owners = members.filter((m) => m.team_id === ownerTeam.id).map((m) => m.uid);
        if (owners.includes(requesterId)) {
          if (owners.length > 1)
            throw new NotAllowedError(
              `only the last owner may delete organization ${org.login}; ${owners.length - 1} other owner(s) remain in the ${ownerTeam.name} team`,
            );
        } else if (!(await this.members.isSiteAdmin(requesterId, trx))) {
          throw new NotAllowedError(`only an owner of ${org.login} or a site admin may delete it`);
        }
        await this.removeRows(trx, stage, orgId, teams, members);
      },
      { call: ctx },
    );
  }

  /**
   * Deletes an organization inside a change that decided so already (a user deleted with the organizations it is
   * the last owner of): locks it, removes its rows and stages what follows them.
   */
  async deleteWithin(trx: Knex.Transaction, stage: StageEffect, orgId: number): Promise<void> {
    if (!(await this.organizations.find(orgId, trx, true))) throw new NotFoundError(`organization ${orgId} does not exist`);
    await this.removeRows(trx, stage, orgId, await this.teams.ofOrg(orgId, trx), await this.members.teamMemberships(orgId, trx));
  }

  private async removeRows(
    trx: Knex.Transaction,
    stage: StageEffect,
    orgId: number,
    teams: { id: number; permission: string }[],
    members: { team_id: number; uid: number }[],
  ): Promise<void> {
    await this.orgs.onOrgDelete?.(trx, orgId, stage);
    await this.organizations.delete(orgId, trx);
    stageTuples(stage, [
      orgOnSite(orgId),
      ...teams.flatMap((t) => teamOfOrg(orgId, t.id)),
      ...teams.filter((t) => t.permission === OWNER_PERMISSION).map((t) => ownerTeamOfOrg(orgId, t.id)),
      ...members.map((m) => teamMember(m.team_id, m.uid)),
    ]);
    stage(EFFECT.orgRolesDeleted, { orgId });
  }
}
