import type { Knex } from 'knex';
import type { Database, Outbox } from '@platform/db';
import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import type { clientOrgsV1, orgsTeamsOrgsV1 } from '@platform/proto';
import type { PromiseClient } from '@platform/service-kit';
import { ClusterSets } from '../cluster-sets/cluster-sets';
import { DESIRED_STATE_EFFECT, type DesiredStateChange } from '../desired-state/desired-state';
import { ClustersStore, type ClusterRow } from '../inventory/clusters-store';
import { clusterObject, TUPLES_EFFECT, type Tuple, type TupleChange } from '../inventory/tuples';

/** The spec's client organization statuses (ClientOrgStatus). */
export type ClientOrgStatus = 'Active' | 'Deleting' | 'Partially Deleted' | 'Deleted' | 'NotFound';

interface ClientOrgRow {
  org_id: number;
  name: string;
  hub_id: number;
  admin_user_id: number;
  admin_login: string;
  requester_id: number;
  status: ClientOrgStatus;
  settings: Record<string, unknown>;
  usable_as_shared: boolean;
  gateway_config_ref: number | null;
  role_refs: string[];
  last_error: string | null;
}

interface ImportRow {
  org_id: number;
  name: string;
  uid: string;
  status: ClientOrgStatus;
}

const orgOwner = (orgId: number, uid: string): Tuple => ({ user: `organization:${orgId}`, relation: 'owner', object: clusterObject(uid) });

/**
 * Client organizations (docs/client-organizations.md). Imports write the client organization as a second owner of
 * each spoke in authz (`organization:<client> owner cluster:<uid>`), so its members see their clusters while the
 * hub's owner keeps them; removals and deletions are marked here and carried out by `cleanup()`, which the app runs
 * periodically, so the routes answer at once and the status routes show the progress.
 */
export class ClientOrgs {
  private readonly clusters: ClustersStore;
  private readonly sets: ClusterSets;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly orgs: Pick<PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>, 'deleteOrg'>,
  ) {
    this.clusters = ClustersStore.create(db);
    this.sets = new ClusterSets(db, outbox);
  }

  /**
   * Records a client organization (or, with `validateOnly`, runs every check and records nothing: answers an empty
   * message). `alsoInTransaction` commits with the record (the provisioning operation finishing).
   */
  async create(
    req: clientOrgsV1.CreateClientOrgRequest,
    alsoInTransaction?: (trx: Knex.Transaction) => Promise<void>,
  ): Promise<clientOrgsV1.ClientOrg> {
    const hub = await this.sets.hub(req.hubUid).catch(() => {
      throw new InputError(`hubClusterUID ${req.hubUid.slice(0, 80)} is not a hub cluster`, [
        { field: 'hubClusterUID', description: 'no such hub' },
      ]);
    });
    if (!hub.manager_endpoint) {
      throw new InputError(`hub ${hub.name} has no multi-cluster-manager endpoint`, [
        { field: 'hubClusterUID', description: 'the hub reports no multi-cluster-manager endpoint' },
      ]);
    }
    const made = await this.outbox.run(async (trx, stage) => {
      await this.clusters.lockByUid(hub.uid, trx);
      if (
        await this.table('client_orgs', trx)
          .where({ name: req.name })
          .orWhere({ org_id: req.orgId || -1 })
          .first()
      ) {
        throw new ConflictError(`client organization ${req.name} already exists`);
      }
      let ref: number | null = null;
      if (req.gatewayConfigRef) {
        const shared: ClientOrgRow | undefined = await this.table('client_orgs', trx).where({ name: req.gatewayConfigRef }).first();
        if (!shared || shared.status !== 'Active' || !shared.usable_as_shared) {
          throw new InputError(
            `gatewayConfigRef ${req.gatewayConfigRef.slice(0, 80)} is not an active client organization usable as shared`,
            [{ field: 'gatewayConfigRef', description: 'no such shared gateway config' }],
          );
        }
        ref = shared.org_id;
      }
      const imports: ClusterRow[] = [];
      for (const setName of [...new Set(req.importSets)]) {
        const set = await this.sets.set(hub, setName, trx).catch(() => {
          throw new InputError(`cluster set ${setName.slice(0, 80)} does not exist on hub ${hub.name}`, [
            { field: 'userPermission.permissions', description: 'no such set' },
          ]);
        });
        const members: ClusterRow[] = await this.table('clusters', trx)
          .join('cluster_set_members', 'cluster_set_members.cluster_id', 'clusters.id')
          .where('cluster_set_members.set_id', set.id)
          .select('clusters.*');
        if (!members.length) throw new InputError(`cluster set ${setName} has no clusters to import`);
        const taken = await this.activeImportsOf(
          members.map((m) => m.uid),
          trx,
        );
        if (taken.length)
          throw new InputError(`clusters already imported by a client organization: ${taken.map((t) => t.name).join(', ')}`);
        imports.push(...members);
      }
      if (req.validateOnly) return undefined;
      await this.table('client_orgs', trx).insert({
        org_id: req.orgId,
        name: req.name,
        hub_id: hub.id,
        admin_user_id: req.adminUserId,
        admin_login: req.adminLogin,
        requester_id: req.requesterId,
        settings: req.settingsJson || '{}',
        usable_as_shared: req.usableAsShared,
        gateway_config_ref: ref,
        role_refs: JSON.stringify(req.roleRefs),
      });
      if (imports.length) {
        await this.table('client_org_clusters', trx).insert(imports.map((c) => ({ org_id: req.orgId, name: c.name, uid: c.uid })));
      }
      for (const ref of req.roleRefs) {
        const [scope, roleRef] = splitRef(ref);
        if (scope === 'hub') continue;
        const set = await this.sets.set(hub, scope, trx);
        await this.table('cluster_set_role_bindings', trx)
          .insert({ set_id: set.id, role_ref: roleRef, login: req.adminLogin })
          .onConflict()
          .ignore();
      }
      stage(TUPLES_EFFECT, {
        writes: [...imports.map((c) => orgOwner(req.orgId, c.uid)), ...hubTuples(req.adminUserId, req.roleRefs, hub.uid)],
        deletes: [],
      } satisfies TupleChange);
      // The imports go to the hub's agent, which gives the client its namespace on each spoke.
      if (imports.length) stage(DESIRED_STATE_EFFECT, { hubId: hub.id } satisfies DesiredStateChange);
      await alsoInTransaction?.(trx);
      return this.get(req.orgId, '', trx);
    });
    return made ?? { orgId: 0, name: req.name, hubUid: hub.uid, adminUserId: 0, status: '', clusters: [], settingsJson: '{}' };
  }

  async get(orgId: number, name: string, trx?: Knex.Transaction): Promise<clientOrgsV1.ClientOrg> {
    const q = this.table('client_orgs', trx);
    const row: ClientOrgRow | undefined = await (orgId ? q.where({ org_id: orgId }) : q.where({ name })).first();
    if (!row || row.status === 'Deleted') throw new NotFoundError(`no client organization ${orgId || name.slice(0, 80)}`);
    return this.message(row, trx);
  }

  async list(): Promise<clientOrgsV1.ClientOrg[]> {
    const rows: ClientOrgRow[] = await this.table('client_orgs').whereNot({ status: 'Deleted' }).orderBy('name');
    return Promise.all(rows.map((r) => this.message(r)));
  }

  /** The organization's status, or one imported cluster's; NotFound when there is none. */
  async status(name: string, cluster: string): Promise<ClientOrgStatus> {
    const org: ClientOrgRow | undefined = await this.table('client_orgs').where({ name }).first();
    if (!org) return 'NotFound';
    if (!cluster) return org.status;
    const row: ImportRow | undefined = await this.table('client_org_clusters').where({ org_id: org.org_id, name: cluster }).first();
    return row?.status ?? 'NotFound';
  }

  async addCluster(req: clientOrgsV1.ClusterSettings): Promise<clientOrgsV1.ClientOrg> {
    return this.outbox.run(async (trx, stage) => {
      const org = await this.active(req.clientOrg, req.hubUid, trx);
      const spoke = await this.clusters.spokeByName(org.hub_id, req.spokeClusterName, trx);
      if (!spoke)
        throw new InputError(`${req.spokeClusterName.slice(0, 80)} is not a managed cluster of the hub`, [
          { field: 'spokeClusterName', description: 'no such cluster' },
        ]);
      const taken = await this.activeImportsOf([spoke.uid], trx);
      if (taken.length) {
        throw new InputError(
          `cluster ${spoke.name} is already imported${taken[0].org_id === org.org_id ? '' : ' by another client organization'}`,
          [{ field: 'spokeClusterName', description: 'already imported' }],
        );
      }
      await this.table('client_org_clusters', trx)
        .insert({ org_id: org.org_id, name: spoke.name, uid: spoke.uid, settings: req.settingsJson || '{}' })
        .onConflict(['org_id', 'name'])
        .merge({ uid: spoke.uid, status: 'Active', settings: req.settingsJson || '{}', updated_at: this.db.knex.fn.now() });
      stage(TUPLES_EFFECT, { writes: [orgOwner(org.org_id, spoke.uid)], deletes: [] } satisfies TupleChange);
      stage(DESIRED_STATE_EFFECT, { hubId: org.hub_id } satisfies DesiredStateChange);
      return this.get(org.org_id, '', trx);
    });
  }

  async removeCluster(req: clientOrgsV1.RemoveClusterRequest): Promise<clientOrgsV1.ClientOrg> {
    return this.db.transaction(async (trx) => {
      const org = await this.active(req.clientOrg, req.hubUid, trx);
      const updated = await this.table('client_org_clusters', trx)
        .where({ org_id: org.org_id, name: req.spokeClusterName, status: 'Active' })
        .update({ status: 'Deleting', updated_at: this.db.knex.fn.now() });
      if (!updated) throw new NotFoundError(`cluster ${req.spokeClusterName.slice(0, 80)} is not imported by ${org.name}`);
      return this.get(org.org_id, '', trx);
    });
  }

  async delete(orgId: number, requesterId: number): Promise<clientOrgsV1.ClientOrg> {
    return this.db.transaction(async (trx) => {
      const org: ClientOrgRow | undefined = await this.table('client_orgs', trx).where({ org_id: orgId }).forUpdate().first();
      if (!org || org.status === 'Deleted') throw new NotFoundError(`no client organization ${orgId}`);
      const users: { name: string }[] = await this.table('client_orgs', trx)
        .where({ gateway_config_ref: orgId })
        .whereNot({ status: 'Deleted' })
        .select('name');
      if (users.length) {
        throw new InputError(
          `client organization ${org.name} is still referenced by the gateway config of ${users.map((u) => u.name).join(', ')}`,
        );
      }
      await this.table('client_orgs', trx)
        .where({ org_id: orgId })
        .update({ status: 'Deleting', requester_id: requesterId || org.requester_id });
      await this.table('client_org_clusters', trx)
        .where({ org_id: orgId, status: 'Active' })
        .update({ status: 'Deleting', updated_at: this.db.knex.fn.now() });
      return this.get(orgId, '', trx);
    });
  }

  /**
   * One pass of the asynchronous cleanup: every cluster being removed loses the client org's owner tuple (through the
   * outbox, which retries until authz takes it) and becomes Deleted; then every organization being deleted whose
   * clusters are all cleaned up is deleted in orgs-teams, its admin's rights on the hub are taken back, and it becomes
   * Deleted — or Partially Deleted (retried next pass) when orgs-teams refuses or cannot be reached.
   */
  async cleanup(log?: { warn(obj: object, msg: string): void }): Promise<void> {
    const removing: (ImportRow & { hub_id: number })[] = await this.table('client_org_clusters')
      .join('client_orgs', 'client_orgs.org_id', 'client_org_clusters.org_id')
      .where({ 'client_org_clusters.status': 'Deleting' })
      .limit(100)
      .select('client_org_clusters.*', 'client_orgs.hub_id');
    for (const c of removing) {
      await this.outbox.run(async (trx, stage) => {
        // The import leaves the hub's desired state: its agent tears the client's namespace down on the spoke.
        stage(DESIRED_STATE_EFFECT, { hubId: c.hub_id } satisfies DesiredStateChange);
        await this.table('client_org_clusters', trx)
          .where({ org_id: c.org_id, name: c.name })
          .update({ status: 'Deleted', updated_at: this.db.knex.fn.now() });
        stage(TUPLES_EFFECT, { writes: [], deletes: [orgOwner(c.org_id, c.uid)] } satisfies TupleChange);
      });
    }
    const orgs: ClientOrgRow[] = await this.table('client_orgs').whereIn('status', ['Deleting', 'Partially Deleted']).limit(100);
    for (const org of orgs) {
      const pending = await this.table('client_org_clusters').where({ org_id: org.org_id, status: 'Deleting' }).first();
      if (pending) continue;
      try {
        await this.orgs.deleteOrg({ orgId: org.org_id, requesterId: org.requester_id }).catch((err: unknown) => {
          if (!(err instanceof NotFoundError)) throw err; // already gone: the step is done
        });
      } catch (err) {
        log?.warn({ clientOrg: org.name, err: (err as Error).message }, 'client organization cleanup failed; retried');
        await this.table('client_orgs')
          .where({ org_id: org.org_id })
          .update({ status: 'Partially Deleted', last_error: (err as Error).message.slice(0, 1000) });
        continue;
      }
      const hub = await this.clusters.byId(org.hub_id);
      await this.outbox.run(async (trx, stage) => {
        await this.table('client_orgs', trx).where({ org_id: org.org_id }).update({ status: 'Deleted', last_error: null });
        if (hub) stage(TUPLES_EFFECT, { writes: [], deletes: hubTuples(org.admin_user_id, org.role_refs, hub.uid) } satisfies TupleChange);
      });
    }
  }

  private table(name: string, trx?: Knex.Transaction) {
    return this.db.table(name, trx);
  }

  /** An active client org by name, served from this hub; 404 unknown, 400 being deleted or another hub. */
  private async active(name: string, hubUid: string, trx: Knex.Transaction): Promise<ClientOrgRow> {
    const org: ClientOrgRow | undefined = await this.table('client_orgs', trx).where({ name }).forUpdate().first();
    if (!org || org.status === 'Deleted') throw new NotFoundError(`no client organization ${name.slice(0, 80)}`);
    if (org.status !== 'Active') throw new InputError(`client organization ${name} is being deleted (${org.status})`);
    const hub = await this.clusters.byId(org.hub_id, trx);
    if (hub?.uid !== hubUid.toLowerCase()) {
      throw new InputError(`hubClusterUID ${hubUid.slice(0, 80)} is not the hub of client organization ${name}`, [
        { field: 'hubClusterUID', description: 'another hub' },
      ]);
    }
    return org;
  }

  private async activeImportsOf(uids: string[], trx: Knex.Transaction): Promise<ImportRow[]> {
    if (!uids.length) return [];
    return this.table('client_org_clusters', trx).whereIn('uid', uids).whereIn('status', ['Active', 'Deleting']);
  }

  private async message(row: ClientOrgRow, trx?: Knex.Transaction): Promise<clientOrgsV1.ClientOrg> {
    const hub = await this.clusters.byId(row.hub_id, trx);
    const clusters: ImportRow[] = await this.table('client_org_clusters', trx).where({ org_id: row.org_id }).orderBy('name');
    return {
      orgId: Number(row.org_id),
      name: row.name,
      hubUid: hub?.uid ?? '',
      adminUserId: Number(row.admin_user_id),
      status: row.status,
      clusters: clusters.map((c) => ({ name: c.name, uid: c.uid, status: c.status })),
      settingsJson: JSON.stringify(row.settings ?? {}),
    };
  }
}

/** "<set or hub>/<roleRefName>". */
function splitRef(ref: string): [string, string] {
  const i = ref.indexOf('/');
  return [ref.slice(0, i), ref.slice(i + 1)];
}

/** The admin's rights on the hub: view, and manage for an admin role-ref on the hub. */
function hubTuples(adminUserId: number, roleRefs: string[], hubUid: string): Tuple[] {
  const hubRefs = roleRefs.filter((r) => r.startsWith('hub/'));
  const tuples: Tuple[] = [{ user: `user:${adminUserId}`, relation: 'view', object: clusterObject(hubUid) }];
  if (hubRefs.some((r) => /admin/i.test(r)))
    tuples.push({ user: `user:${adminUserId}`, relation: 'manage', object: clusterObject(hubUid) });
  return tuples;
}
