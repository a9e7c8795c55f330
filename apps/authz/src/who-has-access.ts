import { InputError, NotFoundError } from '@platform/errors';
import type { AuthzEngine, RequestContext, Tuple, TypeSystem } from './engine';
import { parseObject } from './engine/tuple';
import { accessName } from './access-names';
import { SITE_OBJECT, type ObjectType } from './permissions';

/** One way a user holds a permission. */
export interface AccessPath {
  /** `owner` (directly or through the Owners team), `site_admin`, `role` (a custom role), `relation` (any other tuple). */
  kind: 'owner' | 'site_admin' | 'role' | 'relation';
  /** The team it comes through. */
  teamId?: number;
  /** The custom role that carries it. */
  roleId?: number;
  /** For `relation`: the relation the user holds (e.g. `member`). */
  relation?: string;
  /**
   * When a time-bound team role ends. Only a team's role assignment can be time-bound (the model's `not_after`), and a
   * grant gives access but takes none away, so every end the answer depends on is a path's: its readers keep the
   * answer no longer than the earliest.
   */
  until?: string;
}

export interface PermissionAccess {
  /** The catalog's name of the permission (`edit:org`, `view:role`), or the relation's when the catalog has none (`view`). */
  permission: string;
  /** What it lets one do: the catalog's description, or the model's relation in words (access-names.ts). */
  description: string;
  relation: string;
  users: { userId: number; paths: AccessPath[] }[];
}

/** The kinds of object the view answers for. */
const TYPES: ObjectType[] = ['organization', 'contract', 'cluster'];

/** Relations that link objects rather than grant anything. */
const STRUCTURAL = new Set(['site', 'organization', 'parent']);

/** A user that holds nothing: probes ask whether one grant alone gives a permission. */
const PROBE = 'user:who-has-access-probe';

/** A grant a user may hold: the tuple that gives it to the probe, the users it covers, and how to show it. */
interface Source {
  path: AccessPath;
  probe: Tuple;
  users: Set<number>;
}

const userId = (user: string): number | undefined => {
  const m = /^user:(\d+)$/.exec(user);
  return m ? Number(m[1]) : undefined;
};

/**
 * Who holds each permission of an organization, a contract or a cluster, and through what: for every permission of
 * the object's type, the users the engine lists (list-users, with the request's time for time-bound grants), each
 * with the grants that give it to them. A grant counts for a permission when it alone gives the permission to a
 * user that holds nothing else (a check with that grant as a contextual tuple), so paths follow the model as it
 * is, whatever the relation's rewrite.
 */
export class WhoHasAccess {
  constructor(
    private readonly engine: AuthzEngine,
    private readonly model: TypeSystem,
  ) {}

  /**
   * `owner`: the object's owning account when authz keeps none (a contract's, handed to every question about it),
   * counted as the tuple `<owner> owner <object>` for this answer only, as a check counts a contextual tuple.
   */
  async of(object: string, context: RequestContext, owner?: string): Promise<PermissionAccess[]> {
    const ref = parseObject(object);
    if (!TYPES.includes(ref.type as ObjectType)) {
      throw new InputError(`who has access answers for an organization, a contract or a cluster, not a ${ref.type}`);
    }
    if (owner !== undefined && (ref.type === 'organization' || !/^(organization|user):\d+$/.test(owner)))
      throw new InputError(`an owner is given for a contract or a cluster, as organization:<id> or user:<id>, not ${owner}`);
    const owned: Tuple[] = owner ? [{ user: owner, relation: 'owner', object }] : [];
    const sources = await this.sources(object, ref.type, context, owned);
    // Every relation of the type but the structural links (an organization's site): each is a permission someone holds.
    const relations = this.model.relationsOf(ref.type).filter((r) => !STRUCTURAL.has(r));
    // Which grant gives which relation: one batch of probe checks.
    const probes = relations.flatMap((relation) =>
      sources.map((s) => ({ user: PROBE, relation, object, contextualTuples: [s.probe, ...owned], context })),
    );
    const granted = await this.engine.batchCheck(probes);
    const holders = await Promise.all(
      relations.map((relation) =>
        this.engine.listUsers({ object, relation, userFilters: [{ type: 'user' }], contextualTuples: owned, context }),
      ),
    );
    const byRelation = new Map(
      relations.map((relation, r) => {
        const users = holders[r].map(userId).filter((id): id is number => id !== undefined);
        const paths = users.map((id) => {
          const found = sources.filter((s, i) => granted[r * sources.length + i] && s.users.has(id)).map((s) => s.path);
          return { userId: id, paths: found };
        });
        return [relation, paths.sort((a, b) => a.userId - b.userId)];
      }),
    );
    return relations.map((relation) => ({
      ...accessName(ref.type as ObjectType, relation),
      relation,
      users: byRelation.get(relation) ?? [],
    }));
  }

  /** Every grant reaching the object: its own tuples, its owning organization's owners, members and roles, site admins. */
  private async sources(object: string, type: string, context: RequestContext, owned: Tuple[]): Promise<Source[]> {
    const sources: Source[] = [];
    let org: string | undefined = type === 'organization' ? object : undefined;
    for (const t of [...owned, ...(await this.engine.readTuples({ object }))]) {
      if (t.user.startsWith('organization:')) org = t.user;
      else if (type !== 'organization')
        await this.add(sources, t, { kind: t.relation === 'owner' ? 'owner' : 'relation', relation: t.relation });
    }
    if (type !== 'organization' && !org && sources.length === 0) {
      // Nothing is known of the object: no owner, no tuple.
      const known = await this.engine.readTuples({ user: object });
      if (known.length === 0) throw new NotFoundError(`${object} is not known to authorization`);
    }
    if (org) {
      for (const t of await this.engine.readTuples({ object: org })) {
        if (t.relation === 'site') continue;
        if (t.user.startsWith('role:')) continue; // a role's grants: below, through its assignees
        const path: AccessPath = t.relation === 'owner' ? { kind: 'owner' } : { kind: 'relation', relation: t.relation };
        await this.add(sources, t, path);
      }
      for (const roleId of await this.rolesOf(org)) {
        for (const t of await this.engine.readTuples({ object: `role:${roleId}`, relation: 'assignee' })) {
          const until = t.condition?.name === 'not_after' ? String(t.condition.context?.expires_at ?? '') : undefined;
          // An ended time-bound grant gives nothing now; listing it as a path would mislead.
          if (until && !(Date.parse(until) > Date.parse(String(context.current_time)))) continue;
          await this.add(sources, { ...t, condition: undefined }, { kind: 'role', roleId, ...(until && { until }) });
        }
      }
    }
    const admins = await this.engine.readTuples({ object: SITE_OBJECT, relation: 'admin' });
    const adminIds = new Set(admins.map((t) => userId(t.user)).filter((id): id is number => id !== undefined));
    if (adminIds.size)
      sources.push({ path: { kind: 'site_admin' }, probe: { user: PROBE, relation: 'admin', object: SITE_OBJECT }, users: adminIds });
    return sources;
  }

  /** The ids of the organization's custom roles (those granting it something). */
  private async rolesOf(org: string): Promise<number[]> {
    const ids = new Set<number>();
    for (const t of await this.engine.readTuples({ object: org })) {
      const m = /^role:(\d+)#assignee$/.exec(t.user);
      if (m) ids.add(Number(m[1]));
    }
    return [...ids].sort((a, b) => a - b);
  }

  /** A grant held by a user directly, or by the members of a team (`team:5#member`). */
  private async add(sources: Source[], t: Tuple, path: AccessPath): Promise<void> {
    const probe = { user: PROBE, relation: t.relation, object: t.object };
    const direct = userId(t.user);
    if (direct !== undefined) {
      // Users holding the same tuple directly (an organization's many plain members) share one grant, so one probe.
      const same = sources.find(
        (s) => s.path.teamId === undefined && JSON.stringify(s.path) === JSON.stringify(path) && sameTuple(s.probe, probe),
      );
      if (same) same.users.add(direct);
      else sources.push({ path, probe, users: new Set([direct]) });
      return;
    }
    const team = /^team:(\d+)#member$/.exec(t.user);
    if (!team) return;
    const members = await this.engine.readTuples({ object: `team:${team[1]}`, relation: 'member' });
    const users = new Set(members.map((m) => userId(m.user)).filter((id): id is number => id !== undefined));
    sources.push({ path: { ...path, teamId: Number(team[1]) }, probe, users });
  }
}

const sameTuple = (a: Tuple, b: Tuple) => a.user === b.user && a.relation === b.relation && a.object === b.object;
