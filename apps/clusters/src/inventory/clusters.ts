import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ClustersChanged } from '@platform/bus';
import type { Database, Outbox } from '@platform/db';
import { isUniqueViolation } from '@platform/db';
import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import type { clustersV1, orgsTeamsOrgsV1 } from '@platform/proto';
import type { CallContext, PromiseClient } from '@platform/service-kit';
import { ClustersStore, type ClusterRow, type DescribedCluster, type FeatureRow } from './clusters-store';
import { DESIRED_STATE_EFFECT, type DesiredStateChange } from '../desired-state/desired-state';
import { ownerTuple, TUPLES_EFFECT, type TupleChange } from './tuples';
import { isUuid } from '@platform/proto';

/** A DNS label (RFC 1123): lower-case letters, digits and hyphens, at most 63, starting and ending alphanumeric. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const OWNER_TYPES = ['organization', 'user'];
/** A ClusterRole name as auto-connect binds them (`cluster-admin`, `open-cluster-management:admin`). */
const CLUSTER_ROLE = /^[a-z0-9][-a-z0-9:.]{0,62}$/;
const MAX_STATUS_BYTES = 64 * 1024;

/** Whether a name is a valid cluster name (a DNS label). */
export const isClusterName = (name: string) => DNS_LABEL.test(name);

/** The cluster inventory: hubs of an owner, the managed clusters under them, their namespaces and installed features. */
export class Clusters {
  private readonly store: ClustersStore;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    /**
     * Tells the other apps which clusters changed (they keep what the inventory answered), once the change has
     * committed; awaited before the caller hears of it.
     */
    private readonly changed: (change: ClustersChanged) => Promise<void> = async () => {},
  ) {
    this.store = ClustersStore.create(db);
  }

  /**
   * Records a hub cluster of an owner and, through the outbox, makes the owner the cluster's `owner` in authz.
   * When the tuple cannot be written the record is taken back and the caller gets the error.
   */
  async createHub(
    req: clustersV1.CreateHubRequest,
    ctx: CallContext,
    /** Commits with the hub (an enrolment finishing), and is taken back with it (`undo` with the same transaction). */
    alongside?: { apply(trx: Knex.Transaction): Promise<void>; undo(trx: Knex.Transaction): Promise<void> },
  ): Promise<clustersV1.Cluster> {
    const { uid, status } = checkHubRequest(req);
    let inserted = false;
    try {
      const row = await this.outbox.run(
        async (trx, stage) => {
          await this.refuseTaken(req, uid, trx);
          const row = await this.store.insert(
            {
              uid,
              hub_id: null,
              owner_type: req.ownerType,
              owner_id: req.ownerId,
              name: req.name,
              display_name: req.displayName,
              provider: req.provider,
              kubernetes_version: req.kubernetesVersion,
              node_count: req.nodeCount,
              status,
              manager_endpoint: req.managerEndpoint,
            },
            trx,
          );
          inserted = true;
          stage(TUPLES_EFFECT, { writes: [ownerTuple(req.ownerType, req.ownerId, uid)], deletes: [] } satisfies TupleChange);
          await alongside?.apply(trx);
          return row;
        },
        {
          call: ctx,
          undo: async (trx, row) => {
            await this.store.delete(row.id, trx);
            await alongside?.undo(trx);
          },
        },
      );
      ctx.log.info({ uid, owner: `${req.ownerType}:${req.ownerId}` }, 'hub cluster recorded');
      await this.changed({ uids: [uid], owners: [`${req.ownerType}:${req.ownerId}`] });
      return toMessage(row, null, []);
    } catch (err) {
      // The hub was recorded and taken back (its owner could not be written): another app may have read it meanwhile.
      if (inserted) await this.changed({ uids: [uid], owners: [`${req.ownerType}:${req.ownerId}`] });
      // Two creates racing past the checks: the unique indexes decide.
      if (isUniqueViolation(err)) throw new ConflictError(`a cluster named "${req.name}" or with uid ${uid} already exists`);
      throw err;
    }
  }

  /**
   * Refuses what `createHub` would refuse for this request, recording nothing, so a caller can refuse before it makes
   * anything for the hub (the gateway issues a bus account). `createHub` checks again under its transaction.
   */
  async checkNewHub(req: clustersV1.CreateHubRequest): Promise<string> {
    const { uid } = checkHubRequest(req);
    await this.refuseTaken(req, uid);
    return uid;
  }

  /**
   * 409 when the owner has a hub of this name or any cluster has this uid. The uid's message is the same whoever owns
   * the cluster, the caller or anyone else, and names neither: a cluster's owner is not the caller's business.
   */
  private async refuseTaken(req: clustersV1.CreateHubRequest, uid: string, trx?: Knex.Transaction): Promise<void> {
    if (await this.store.hubByName(req.ownerType, req.ownerId, req.name, trx)) {
      throw new ConflictError(`a cluster named "${req.name}" already exists`);
    }
    if (await this.store.byUid(uid, trx)) throw new ConflictError(`a cluster with uid ${uid} already exists`);
  }

  // The reads below are one statement each (the store's `described`): a cluster with its hub's UID and features.

  async listHubs(ownerType: string, ownerId: number): Promise<clustersV1.Cluster[]> {
    checkOwner(ownerType, ownerId);
    const rows = await this.store.described((q) =>
      q.where({ 'c.owner_type': ownerType, 'c.owner_id': ownerId }).whereNull('c.hub_id').orderBy('c.name'),
    );
    return rows.map(describedMessage);
  }

  /** Every cluster of an owner (a managed cluster is its hub's owner's): each hub, by name, then its managed clusters. */
  async listOwnerClusters(ownerType: string, ownerId: number): Promise<clustersV1.Cluster[]> {
    checkOwner(ownerType, ownerId);
    const rows = await this.store.described((q) =>
      q.where({ 'c.owner_type': ownerType, 'c.owner_id': ownerId }).orderByRaw('coalesce(h.name, c.name), c.hub_id is not null, c.name'),
    );
    return rows.map(describedMessage);
  }

  async getHub(ownerType: string, ownerId: number, name: string): Promise<clustersV1.Cluster> {
    checkOwner(ownerType, ownerId);
    const [row] = await this.store.described((q) =>
      q.where({ 'c.owner_type': ownerType, 'c.owner_id': ownerId, 'c.name': name }).whereNull('c.hub_id'),
    );
    if (!row) throw new NotFoundError(`cluster "${name}" not found`);
    return describedMessage(row);
  }

  async getCluster(uid: string): Promise<clustersV1.Cluster> {
    const lower = uid.toLowerCase();
    const [row] = isUuid(lower) ? await this.store.described((q) => q.where('c.uid', lower)) : [];
    if (!row) throw new NotFoundError(`cluster ${uid.slice(0, 80)} not found`);
    return describedMessage(row);
  }

  /**
   * The clusters among `uids`, hubs and managed clusters alike, in the order asked; UIDs of no cluster (or not
   * UUIDs) are left out. One statement whatever the number.
   */
  async getClusters(uids: string[]): Promise<clustersV1.Cluster[]> {
    if (uids.length > 1000) throw new InputError('at most 1000 cluster UIDs at a time');
    const wanted = [...new Set(uids.map((u) => u.toLowerCase()).filter((u) => isUuid(u)))];
    if (wanted.length === 0) return [];
    const byUid = new Map((await this.store.described((q) => q.whereIn('c.uid', wanted))).map((r) => [r.uid, describedMessage(r)]));
    return wanted.flatMap((u) => byUid.get(u) ?? []);
  }

  async listSpokes(hubUid: string): Promise<clustersV1.Cluster[]> {
    const lower = hubUid.toLowerCase();
    const rows = isUuid(lower) ? await this.store.described((q) => q.where('h.uid', lower).orderBy('c.name')) : [];
    // No spokes, or no such hub: only the second is 404.
    if (rows.length === 0) await this.findHub(hubUid);
    return rows.map(describedMessage);
  }

  async getSpoke(hubUid: string, name: string): Promise<clustersV1.Cluster> {
    const lower = hubUid.toLowerCase();
    const [row] = isUuid(lower) ? await this.store.described((q) => q.where({ 'h.uid': lower, 'c.name': name })) : [];
    if (!row) {
      await this.findHub(hubUid);
      throw new NotFoundError(`managed cluster "${name}" not found`);
    }
    return describedMessage(row);
  }

  async listNamespaces(clusterUid: string): Promise<clustersV1.Namespace[]> {
    const row = await this.findByUid(clusterUid);
    return (await this.store.namespacesOf(row.id)).map((n) => ({ name: n.name, createdUnix: unix(n.created_at) }));
  }

  /**
   * Team auto-connect: records (or removes) the user on every hub of the owner and sends each hub whose record
   * changed its desired state, in the same transaction (outbox), so the agent connects or disconnects the user on
   * the hub and its managed clusters. An owner without hubs changes nothing; repeating a call changes nothing.
   */
  async setUserConnection(req: clustersV1.SetUserConnectionRequest): Promise<clustersV1.SetUserConnectionResponse> {
    checkOwner(req.ownerType, req.ownerId);
    if (!Number.isSafeInteger(req.userId) || req.userId <= 0)
      throw new InputError('userId must be an account id', [{ field: 'userId', description: 'must be positive' }]);
    if (req.connect) {
      if (!req.login) throw new InputError('login is required to connect a user', [{ field: 'login', description: 'required' }]);
      checkLength('login', req.login, 255);
      if (!CLUSTER_ROLE.test(req.role))
        throw new InputError('role must be a ClusterRole name', [{ field: 'role', description: 'a ClusterRole name' }]);
    }
    const changed = await this.outbox.run(async (trx, stage) => {
      const hubs = await this.store.hubsOf(req.ownerType, req.ownerId, trx);
      const changed: ClusterRow[] = [];
      for (const hub of hubs) {
        const rows = () => this.db.table('hub_connected_users', trx);
        const now = await rows().where({ hub_id: hub.id, user_id: req.userId }).first();
        if (req.connect) {
          if (now && now.login === req.login && now.role === req.role) continue;
          await rows()
            .insert({ hub_id: hub.id, user_id: req.userId, login: req.login, role: req.role })
            .onConflict(['hub_id', 'user_id'])
            .merge(['login', 'role']);
        } else {
          if (!now) continue;
          await rows().where({ hub_id: hub.id, user_id: req.userId }).delete();
        }
        stage(DESIRED_STATE_EFFECT, { hubId: Number(hub.id) } satisfies DesiredStateChange);
        changed.push(hub);
      }
      return changed;
    });
    return { changedHubUids: changed.map((h) => h.uid) };
  }

  /**
   * Takes back the connections of users no longer in the owner team of the organization that owns the hub — however
   * they left it (the organization's member routes, its deletion, a failed gateway step): the teams routes
   * disconnect at once, this pass catches every other way. Only rows recorded before the pass read the owner team
   * are taken back, so a connection made meanwhile by a PUT (member added, then connected) is never undone. An
   * organization that no longer exists loses them all; one orgs-teams cannot answer for is left for the next pass.
   * Answers how many connections it took back.
   */
  async reconcileConnections(
    orgs: Pick<PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>, 'listTeams' | 'listTeamMembers'>,
    log?: { warn(obj: object, msg: string): void },
  ): Promise<number> {
    let taken = 0;
    const owners: { owner_id: string | number }[] = await this.db
      .table('hub_connected_users')
      .join('clusters', 'clusters.id', 'hub_connected_users.hub_id')
      .where('clusters.owner_type', 'organization')
      .distinct('clusters.owner_id');
    for (const { owner_id } of owners) {
      const orgId = Number(owner_id);
      // The database's clock, which also stamps created_at.
      const [{ now: readAt }] = (await this.db.knex.select(this.db.knex.raw('now() as now'))) as { now: Date }[];
      let keep: number[];
      try {
        const owner = (await orgs.listTeams({ orgId })).teams.find((t) => t.permission === 'owner');
        keep = owner ? (await orgs.listTeamMembers({ teamId: owner.id })).members.map((m) => Number(m.id)) : [];
      } catch (err) {
        if (!(err instanceof NotFoundError)) {
          log?.warn({ orgId, err: (err as Error).message }, 'cluster connections not reconciled: orgs-teams did not answer');
          continue;
        }
        keep = []; // the organization is gone: nobody of it stays connected
      }
      await this.outbox.run(async (trx, stage) => {
        const gone: { hub_id: number }[] = await this.db
          .table('hub_connected_users', trx)
          .whereIn('hub_id', this.db.table('clusters', trx).where({ owner_type: 'organization', owner_id: orgId }).select('id'))
          .whereNotIn('user_id', keep)
          .where('created_at', '<', readAt)
          .delete()
          .returning('hub_id');
        taken += gone.length;
        for (const hubId of new Set(gone.map((g) => Number(g.hub_id)))) stage(DESIRED_STATE_EFFECT, { hubId } satisfies DesiredStateChange);
      });
    }
    return taken;
  }

  private async findByUid(uid: string): Promise<ClusterRow> {
    const lower = uid.toLowerCase();
    const row = isUuid(lower) ? await this.store.byUid(lower) : undefined;
    if (!row) throw new NotFoundError(`cluster ${uid.slice(0, 80)} not found`);
    return row;
  }

  private async findHub(uid: string): Promise<ClusterRow> {
    const row = await this.findByUid(uid);
    if (row.hub_id !== null) throw new NotFoundError(`hub cluster ${uid} not found`);
    return row;
  }
}

/** The checks of a new hub's fields (400 each), shared by `createHub` and `checkNewHub`: its uid (lower-case, made when empty) and status. */
function checkHubRequest(req: clustersV1.CreateHubRequest): { uid: string; status: Record<string, unknown> } {
  checkOwner(req.ownerType, req.ownerId);
  if (!isClusterName(req.name)) {
    throw new InputError(
      `cluster name "${req.name.slice(0, 80)}" must be a DNS label: at most 63 lower-case letters, digits or hyphens, starting and ending with a letter or digit`,
      [{ field: 'name', description: 'must be a DNS label' }],
    );
  }
  const uid = (req.uid || randomUUID()).toLowerCase();
  if (!isUuid(uid)) throw new InputError('uid must be a UUID', [{ field: 'uid', description: 'must be a UUID' }]);
  checkLength('displayName', req.displayName, 255);
  checkLength('provider', req.provider, 64);
  checkLength('kubernetesVersion', req.kubernetesVersion, 64);
  checkLength('managerEndpoint', req.managerEndpoint, 2048);
  if (req.nodeCount < 0) throw new InputError('nodeCount must not be negative', [{ field: 'nodeCount', description: 'must be 0 or more' }]);
  return { uid, status: parseStatus(req.statusJson) };
}

function checkOwner(ownerType: string, ownerId: number): void {
  if (!OWNER_TYPES.includes(ownerType)) {
    throw new InputError('ownerType must be organization or user', [{ field: 'ownerType', description: 'must be organization or user' }]);
  }
  if (!Number.isSafeInteger(ownerId) || ownerId <= 0)
    throw new InputError('ownerId must be an account id', [{ field: 'ownerId', description: 'must be positive' }]);
}

function checkLength(field: string, value: string, max: number): void {
  if (value.length > max)
    throw new InputError(`${field} must be at most ${max} characters`, [{ field, description: `at most ${max} characters` }]);
}

/** The status object of a create: JSON of an object ("" for {}). */
function parseStatus(json: string): Record<string, unknown> {
  if (!json) return {};
  if (json.length > MAX_STATUS_BYTES)
    throw new InputError(`status must be at most ${MAX_STATUS_BYTES} bytes`, [{ field: 'status', description: 'too large' }]);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InputError('status must be a JSON object', [{ field: 'status', description: 'must be an object' }]);
  }
  return value as Record<string, unknown>;
}

const unix = (d: Date) => Math.floor(new Date(d).getTime() / 1000);

/** A cluster row as the Cluster message (cluster sets answer their members with it too). */
export function toMessage(row: ClusterRow, hubUid: string | null, features: FeatureRow[]): clustersV1.Cluster {
  return {
    uid: row.uid,
    name: row.name,
    displayName: row.display_name,
    provider: row.provider,
    kubernetesVersion: row.kubernetes_version,
    nodeCount: row.node_count,
    statusJson: JSON.stringify(row.status ?? {}),
    createdUnix: unix(row.created_at),
    managerEndpoint: row.manager_endpoint,
    ownerType: row.owner_type,
    ownerId: Number(row.owner_id),
    hubUid: hubUid ?? '',
    features: features.map((f) => ({ name: f.feature, version: f.version, updatedUnix: unix(f.updated_at) })),
    id: Number(row.id),
    observedUnix: row.observed_at ? unix(row.observed_at) : 0,
    connectedUsers: (row.connected_users ?? []).map((u) => ({ login: u.login, role: u.role })),
  };
}

/** A cluster read with its hub's UID and features (`ClustersStore.described`) as the Cluster message. */
export const describedMessage = (row: DescribedCluster): clustersV1.Cluster => toMessage(row, row.hub_uid, row.features);
