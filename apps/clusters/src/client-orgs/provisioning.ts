import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { isUniqueViolation, type Database, type EffectContext, type EffectHandler, type Outbox } from '@platform/db';
import { ConflictError, crashPoint, DomainError, InputError, NotFoundError, UnavailableError } from '@platform/errors';
import type { clientOrgsV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import type { CallOptions, PromiseClient } from '@platform/service-kit';
import { ClustersStore } from '../inventory/clusters-store';
import { isUuid } from '@platform/proto';
import type { ClientOrgs } from './client-orgs';

/** The outbox effect that carries a client-org provisioning to its end, or back to nothing. */
export const PROVISION_CLIENT_ORG_EFFECT = 'client-org.provision';

const TABLE = 'client_org_provisions';
const TRANSIENT = ['unavailable', 'deadline', 'internal', 'too-many-requests'];
const isTransient = (err: unknown) => !(err instanceof DomainError) || TRANSIENT.includes(err.kind);

type Identity = Pick<PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>, 'getUser' | 'createUser' | 'deleteUnusedUser'>;
type Organizations = Pick<
  PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>,
  'getOrg' | 'createOrg' | 'deleteOrg' | 'getMembership'
>;

/** A provisioning under way (the row exists only until it is finished or undone). */
interface ProvisionRow {
  id: number;
  name: string;
  state: 'provisioning' | 'undoing';
  request: clientOrgsV1.ProvisionClientOrgRequest & { managerEndpoint: string };
  admin_login: string;
  admin_existed: boolean;
  admin_user_id: number | null;
  admin_created: boolean;
  org_id: number | null;
  requester_id: number;
  created_at: Date;
}

/** What the request that started a provisioning waits for: the result, or why it failed. */
interface Outcome {
  /** The request's run has begun: a relay pass of this process leaves the operation to it. */
  running?: boolean;
  result?: clientOrgsV1.ProvisionedClientOrg;
  error?: unknown;
}

const ignoreNotFound = (err: unknown) => {
  if (!(err instanceof NotFoundError)) throw err;
  return undefined;
};

/**
 * Client-org creation as one operation (docs/client-organizations.md): the admin user and the organization in
 * orgs-teams, then the client organization's record here. The operation is recorded, with the outbox entry that
 * drives it, before its first step; each step records what it made and finds what it made before a crash, so doing
 * it again changes nothing. The request runs the steps itself and answers the outcome; a failure takes back what
 * was made (the organization, and the admin user when this operation made it). After a crash the outbox relay
 * resumes the operation: it carries it to the end, or undoes it when a step is refused for good.
 */
export class ClientOrgProvisioning {
  private readonly clusters: ClustersStore;
  /** Outcomes awaited by requests of this process, by operation id. */
  private readonly waiting = new Map<number, Outcome>();
  private outbox!: Outbox;
  private clientOrgs!: ClientOrgs;

  constructor(
    private readonly db: Database,
    private readonly identity: Identity,
    private readonly orgs: Organizations,
    private readonly log?: { warn(obj: object, msg: string): void },
  ) {
    this.clusters = ClustersStore.create(db);
  }

  effect(): EffectHandler<{ operationId: number }> {
    return { apply: (e, call) => this.resume(e.operationId, call) };
  }

  /** Hands the provisioning its outbox (opened over `effect()`) and the client records. */
  use(outbox: Outbox, clientOrgs: ClientOrgs): void {
    this.outbox = outbox;
    this.clientOrgs = clientOrgs;
  }

  /** Checks the request, records the operation and runs it; answers the organization and its client record. */
  async provision(req: clientOrgsV1.ProvisionClientOrgRequest, call: EffectContext): Promise<clientOrgsV1.ProvisionedClientOrg> {
    const opts = callOptions(call);
    const hub = await this.hubOf(req.hubOwnerName, req.hubUid, req.requesterId, opts);
    if (!hub.manager_endpoint) throw new InputError(`hub ${hub.name} has no multi-cluster-manager endpoint`);
    const { name } = req;
    // Organizations and users share one namespace of slugs: either taken is 409, before anything is made.
    if (await this.orgs.getOrg({ name, viewerId: req.requesterId }, opts).catch(ignoreNotFound)) {
      throw new ConflictError(`an organization named ${name} already exists`);
    }
    if (await this.identity.getUser({ id: 0, login: name }, opts).catch(ignoreNotFound)) {
      throw new ConflictError(`a user named ${name} already exists`);
    }
    // Everything the record can refuse is checked before anything is made.
    await this.clientOrgs.create({ ...recordRequest(req, hub.uid), validateOnly: true });
    const adminExisted = (await this.identity.getUser({ id: 0, login: req.adminLogin }, opts).catch(ignoreNotFound)) !== undefined;
    const outcome: Outcome = {};
    let id: number | undefined;
    try {
      await this.outbox.run(
        async (trx, stage) => {
          const [row] = await this.table(trx)
            .insert({
              name,
              state: 'provisioning',
              request: JSON.stringify({ ...req, hubUid: hub.uid, managerEndpoint: hub.manager_endpoint }),
              admin_login: req.adminLogin,
              admin_existed: adminExisted,
              requester_id: req.requesterId,
            })
            .returning('id');
          id = Number(row.id);
          this.waiting.set(id, outcome);
          stage(PROVISION_CLIENT_ORG_EFFECT, { operationId: id });
        },
        { call },
      );
    } catch (err) {
      // Another request is making a client organization of this name right now.
      if (isUniqueViolation(err)) throw new ConflictError(`an organization named ${name} already exists`);
      throw err;
    } finally {
      if (id !== undefined) this.waiting.delete(id);
    }
    if (outcome.result) return outcome.result;
    throw outcome.error ?? new UnavailableError(`client organization ${name} could not be made; it is being taken back`);
  }

  /**
   * Carries an operation on from where it is. The request that started it goes forward and undoes on any failure; the
   * relay (after a crash) goes forward, retries what may pass by itself, and undoes what is refused for good.
   */
  async resume(id: number, call: EffectContext = {}): Promise<void> {
    const op = await this.row(id);
    if (!op) return;
    const outcome = this.waiting.get(id);
    if (outcome?.running) throw new UnavailableError(`the creation of client organization ${op.name} is still running`);
    if (outcome) outcome.running = true;
    if (op.state === 'provisioning') {
      try {
        const result = await this.forward(op, callOptions(call), outcome !== undefined);
        if (outcome) outcome.result = result;
        return;
      } catch (err) {
        if (!outcome && isTransient(err)) throw err;
        if (outcome) outcome.error = err;
        const moved = await this.table()
          .where({ id, state: 'provisioning' })
          .update({ state: 'undoing', last_error: (err as Error).message.slice(0, 1000) });
        if (!moved) return; // finished meanwhile by another run
      }
    }
    // Undoing gets the time it needs, not what is left of the request's.
    await this.backward(id, { requestId: call.requestId });
  }

  private async forward(op: ProvisionRow, call: CallOptions, answer: boolean): Promise<clientOrgsV1.ProvisionedClientOrg | undefined> {
    const req = op.request;
    let adminId = op.admin_user_id === null ? undefined : Number(op.admin_user_id);
    if (adminId === undefined) {
      const admin = await this.adminUser(op, call);
      adminId = admin.id;
      await this.record(op.id, { admin_user_id: admin.id, admin_created: admin.created });
      if (answer) fault('admin-user');
    }
    let org: orgsTeamsOrgsV1.Organization | undefined;
    let orgId = op.org_id === null ? undefined : Number(op.org_id);
    if (orgId === undefined) {
      org = await this.orgs
        .createOrg(
          {
            creatorId: adminId,
            username: op.name,
            fullName: req.fullName,
            description: req.description,
            website: req.website,
            location: '',
            orgType: req.orgType,
            visibility: req.visibility,
            managerEndpoint: req.managerEndpoint,
          },
          call,
        )
        .catch(async (err: unknown) => {
          // Made before a crash, by this operation: its admin user is a member of it.
          if (err instanceof ConflictError) {
            const ours = await this.ourOrg(op, call);
            if (ours) return ours;
          }
          throw err;
        });
      orgId = org.id;
      await this.record(op.id, { org_id: orgId });
      if (answer) fault('org');
    }
    const clientOrg = await this.clientOrgs.create({ ...recordRequest(req, req.hubUid), orgId, adminUserId: adminId }, async (trx) => {
      // The record and the end of the operation commit together; a run that finds it gone was overtaken.
      const done = await this.table(trx).where({ id: op.id, state: 'provisioning' }).delete();
      if (!done) throw new UnavailableError(`the creation of client organization ${op.name} was taken over`);
    });
    if (!answer) return undefined;
    org ??= await this.orgs.getOrg({ name: op.name, viewerId: op.requester_id }, call);
    return { organization: org, clientOrg };
  }

  /** Takes back what the operation made: the organization, then the admin user when the operation made it. */
  private async backward(id: number, call: CallOptions): Promise<void> {
    const op = await this.row(id);
    if (!op) return;
    const orgId = op.org_id === null ? (await this.ourOrg(op, call))?.id : Number(op.org_id);
    if (orgId !== undefined) {
      await this.orgs.deleteOrg({ orgId, requesterId: op.requester_id }, call).catch(ignoreNotFound);
    }
    let userId: number | undefined;
    if (op.admin_user_id !== null) userId = op.admin_created ? Number(op.admin_user_id) : undefined;
    else if (!op.admin_existed) userId = (await this.ourUser(op, call))?.id;
    if (userId !== undefined) {
      await this.identity.deleteUnusedUser({ id: userId }, call).catch((err: unknown) => {
        if (err instanceof NotFoundError) return;
        if (isTransient(err)) throw err;
        // Someone signed in with it meanwhile (after a password reset): it is theirs now.
        this.log?.warn({ clientOrg: op.name, userId, err: (err as Error).message }, 'admin user of an undone client organization kept');
      });
    }
    await this.table().where({ id }).delete();
  }

  /** The admin user: the existing one, or one made with a random password it must change (never answered). */
  private async adminUser(op: ProvisionRow, call: CallOptions): Promise<{ id: number; created: boolean }> {
    const found = await this.identity.getUser({ id: 0, login: op.admin_login }, call).catch(ignoreNotFound);
    if (found) return { id: found.id, created: !op.admin_existed && isOurUser(found, op) };
    try {
      const made = await this.identity.createUser(
        {
          username: op.admin_login,
          email: op.request.adminEmail,
          password: randomBytes(24).toString('base64url'),
          fullName: '',
          mustChangePassword: true,
          isAdmin: false,
        },
        call,
      );
      return { id: made.id, created: true };
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      // Made meanwhile (by a run of this operation, or by someone else: then it is only used, never deleted).
      const now = await this.identity.getUser({ id: 0, login: op.admin_login }, call).catch(ignoreNotFound);
      if (!now) throw err;
      return { id: now.id, created: !op.admin_existed && isOurUser(now, op) };
    }
  }

  /** The organization of the operation's name when this operation made it (its admin user is a member). */
  private async ourOrg(op: ProvisionRow, call: CallOptions): Promise<orgsTeamsOrgsV1.Organization | undefined> {
    const org = await this.orgs.getOrg({ name: op.name, viewerId: op.requester_id }, call).catch(ignoreNotFound);
    if (!org) return undefined;
    const m = await this.orgs.getMembership({ orgId: org.id, viewerId: op.requester_id, username: op.admin_login }, call);
    return m.member ? org : undefined;
  }

  /** The admin user when this operation made it (before a crash kept it from recording so). */
  private async ourUser(op: ProvisionRow, call: CallOptions): Promise<orgsTeamsV1.User | undefined> {
    const user = await this.identity.getUser({ id: 0, login: op.admin_login }, call).catch(ignoreNotFound);
    return user && isOurUser(user, op) ? user : undefined;
  }

  /** The hub of `owner` with this UID; 400 otherwise. */
  private async hubOf(owner: string, uid: string, viewerId: number, call: CallOptions) {
    let ownerId: number;
    const org = await this.orgs.getOrg({ name: owner, viewerId }, call).catch(ignoreNotFound);
    if (org) ownerId = org.id;
    else {
      const user = await this.identity.getUser({ id: 0, login: owner }, call).catch(ignoreNotFound);
      if (!user) throw new InputError(`hubClusterOwnerName ${owner.slice(0, 80)} is no organization or user`);
      ownerId = user.id;
    }
    const lower = uid.toLowerCase();
    const hub = isUuid(lower) ? await this.clusters.byUid(lower) : undefined;
    if (!hub) throw new InputError(`hubClusterUID ${uid.slice(0, 80)} is no cluster`);
    if (hub.hub_id !== null || Number(hub.owner_id) !== ownerId)
      throw new InputError(`hubClusterUID ${uid.slice(0, 80)} is not a hub cluster of ${owner.slice(0, 80)}`);
    return hub;
  }

  private async record(id: number, fields: Partial<ProvisionRow>): Promise<void> {
    const moved = await this.table().where({ id, state: 'provisioning' }).update(fields);
    if (!moved) throw new UnavailableError('the client organization is being taken back');
  }

  private async row(id: number): Promise<ProvisionRow | undefined> {
    return this.table().where({ id }).first();
  }

  private table(trx?: Knex.Transaction) {
    return this.db.table(TABLE, trx);
  }
}

/** The client record's request for a provisioning (ids filled in by the steps). */
function recordRequest(req: clientOrgsV1.ProvisionClientOrgRequest, hubUid: string): clientOrgsV1.CreateClientOrgRequest {
  return {
    orgId: 0,
    name: req.name,
    hubUid,
    adminUserId: 0,
    adminLogin: req.adminLogin,
    importSets: req.importSets,
    roleRefs: req.roleRefs,
    settingsJson: req.settingsJson,
    gatewayConfigRef: req.gatewayConfigRef,
    usableAsShared: req.usableAsShared,
    requesterId: req.requesterId,
    validateOnly: false,
  };
}

/** A user this operation made: its address, never signed in, made after the operation was recorded. */
function isOurUser(user: orgsTeamsV1.User, op: ProvisionRow): boolean {
  return (
    user.email.toLowerCase() === op.request.adminEmail.toLowerCase() &&
    user.mustChangePassword &&
    user.lastLoginUnix === 0 &&
    user.createdUnix >= Math.floor(new Date(op.created_at).getTime() / 1000) - 1
  );
}

/** The calls of a step: the request's id and deadline, and its cancellation. */
function callOptions(call: EffectContext): CallOptions {
  return { requestId: call.requestId, deadline: call.deadline, signal: call.signal };
}

/**
 * Kills the process after a step of a request's run (never the relay's, which resumes one that was killed), for the
 * test that proves a crash there leaves all or nothing.
 */
function fault(step: string): void {
  crashPoint(`client-org-after-${step}`);
}
