import type { Request } from 'express';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import { NotAllowedError } from '@platform/errors';
import type { RouteContext } from '../route';
import { parseId } from '../validation';

// One lookup per request: the permission check and the handler share it.
const orgs = new WeakMap<Request, Promise<orgsTeamsOrgsV1.Organization>>();
const teams = new WeakMap<Request, Promise<orgsTeamsOrgsV1.Team>>();

/**
 * The organization named by `:orgname`, as the caller may see it: 404 when it does not exist or is
 * invisible to the caller (a private organization to non-members, a limited one to anonymous callers).
 */
export function orgOfPath(req: Request, ctx: RouteContext): Promise<orgsTeamsOrgsV1.Organization> {
  let org = orgs.get(req);
  if (!org) {
    org = ctx.backends.orgs.getOrg({ name: String(req.params.orgname), viewerId: ctx.caller?.id ?? 0 }, { requestId: ctx.requestId });
    orgs.set(req, org);
  }
  return org;
}

/** Check target of `/orgs/{orgname}/...` routes: the id of the organization in the path (404 as orgOfPath). */
export async function orgFromPath(req: Request, ctx: RouteContext): Promise<number> {
  return (await orgOfPath(req, ctx)).id;
}

/**
 * The team named by `:teamid` (400 when not an id, 404 when unknown); under `/orgs/{orgname}/` it must
 * also belong to that organization, which the caller must be able to see.
 */
export function teamOfPath(req: Request, ctx: RouteContext): Promise<orgsTeamsOrgsV1.Team> {
  let team = teams.get(req);
  if (!team) {
    team = (async () => {
      const teamId = parseId(req.params.teamid, 'teamid');
      const orgId = req.params.orgname === undefined ? 0 : await orgFromPath(req, ctx);
      return ctx.backends.orgs.getTeam({ teamId, orgId, withRoles: false }, { requestId: ctx.requestId });
    })();
    teams.set(req, team);
  }
  return team;
}

/** Check target of team routes: the id of the team in the path (404 as teamOfPath). */
export async function teamFromPath(req: Request, ctx: RouteContext): Promise<number> {
  return (await teamOfPath(req, ctx)).id;
}

/** Whether the caller holds a permission (a name of apps/authz/src/permissions.ts) on an object. */
export async function holds(ctx: RouteContext, permission: string, objectId: number): Promise<boolean> {
  if (!ctx.caller) return false;
  const { allowed } = await ctx.backends.authz.checkPermission(
    { userId: ctx.caller.id, permission, objectId },
    { requestId: ctx.requestId },
  );
  return allowed;
}

/** 403 unless the caller holds the permission, with the message the route checks give. */
export async function requirePermission(ctx: RouteContext, permission: string, objectId: number): Promise<void> {
  if (!(await holds(ctx, permission, objectId))) throw new NotAllowedError(`you do not have the ${permission} permission`);
}
