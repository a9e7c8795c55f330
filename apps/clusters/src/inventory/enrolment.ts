import type { Knex } from 'knex';
import { isUniqueViolation, type Database, type EffectContext, type EffectHandler, type Outbox } from '@platform/db';
import { ConflictError, crashPoint, DomainError, InputError, NotFoundError, UnavailableError } from '@platform/errors';
import type { clustersV1, orgTokensV1 } from '@platform/proto';
import type { CallContext, CallOptions, PromiseClient } from '@platform/service-kit';
import type { Clusters } from './clusters';
import { ClustersStore } from './clusters-store';

/** The outbox effect that finishes a hub enrolment, or takes it back. */
export const ENROLL_HUB_EFFECT = 'hub.enroll';

const TABLE = 'hub_enrolments';
const TRANSIENT = ['unavailable', 'deadline', 'internal', 'too-many-requests'];
const isTransient = (err: unknown) => !(err instanceof DomainError) || TRANSIENT.includes(err.kind);

type OrgTokens = Pick<
  PromiseClient<typeof orgTokensV1.OrgTokensServiceService>,
  'createBusAccount' | 'listBusAccounts' | 'revokeBusAccount'
>;

/** An enrolment under way: enrolling, undoing, or done (its hub committed; the row goes right after). */
interface EnrolmentRow {
  id: number;
  owner_id: number;
  name: string;
  uid: string;
  state: 'enrolling' | 'undoing' | 'done';
  request: clustersV1.CreateHubRequest;
  bus_account_id: number | null;
}

/** The request that started an enrolment: its call, and then the result or why it failed. */
interface Waiting {
  ctx: CallContext;
  /** The request's run has begun: a relay pass of this process leaves the enrolment to it. */
  running?: boolean;
  result?: clustersV1.EnrolledHub;
  error?: unknown;
}

/**
 * Hub enrolment as one operation (docs/clusters.md): a bus account for the hub's agent in orgs-teams, then the hub
 * recorded here. The operation is recorded, with the outbox entry that drives it, before the account is issued. The
 * request runs the steps and answers the hub with the account's seed, which is issued only then and never stored; when
 * the hub is refused, the account is revoked. After a crash nobody can have the seed any more, so the outbox relay
 * takes back an enrolment whose hub was not recorded: it revokes every active account of the organization naming the
 * hub's uid (no cluster has that uid, so no agent of a hub uses one).
 */
export class HubEnrolment {
  private readonly store: ClustersStore;
  private readonly waiting = new Map<number, Waiting>();
  private outbox!: Outbox;
  private clusters!: Clusters;

  constructor(
    private readonly db: Database,
    private readonly orgTokens: OrgTokens,
    private readonly log?: { warn(obj: object, msg: string): void },
  ) {
    this.store = ClustersStore.create(db);
  }

  effect(): EffectHandler<{ operationId: number }> {
    return { apply: (e, call) => this.resume(e.operationId, call) };
  }

  /** Hands the enrolment its outbox (opened over `effect()`) and the inventory. */
  use(outbox: Outbox, clusters: Clusters): void {
    this.outbox = outbox;
    this.clusters = clusters;
  }

  /** Checks the hub as CreateHub would, records the enrolment and runs it; answers the hub and its bus credentials. */
  async enroll(req: clustersV1.CreateHubRequest, ctx: CallContext): Promise<clustersV1.EnrolledHub> {
    // What the inventory would refuse is refused before an account exists, so a refusal leaves nothing behind.
    const uid = await this.clusters.checkNewHub(req);
    if (req.ownerType !== 'organization') throw new InputError('only an organization enrolls hubs with bus credentials');
    const request = { ...req, uid };
    const waiting: Waiting = { ctx };
    let id: number | undefined;
    try {
      await this.outbox.run(
        async (trx, stage) => {
          const [row] = await this.table(trx)
            .insert({ owner_id: req.ownerId, name: req.name, uid, state: 'enrolling', request: JSON.stringify(request) })
            .returning('id');
          id = Number(row.id);
          this.waiting.set(id, waiting);
          stage(ENROLL_HUB_EFFECT, { operationId: id });
        },
        { call: ctx },
      );
    } catch (err) {
      // Another enrolment of this name or uid is under way right now.
      if (isUniqueViolation(err)) throw new ConflictError(`a cluster named "${req.name}" or with uid ${uid} already exists`);
      throw err;
    } finally {
      if (id !== undefined) this.waiting.delete(id);
    }
    if (waiting.result) return waiting.result;
    throw waiting.error ?? new UnavailableError(`cluster ${req.name} could not be enrolled; its bus account is being revoked`);
  }

  /** Carries an enrolment on: forward for the request that started it, back for the relay (the seed is gone). */
  async resume(id: number, call: EffectContext = {}): Promise<void> {
    const op = await this.row(id);
    if (!op) return;
    if (op.state === 'done') {
      await this.table().where({ id }).delete();
      return;
    }
    const waiting = this.waiting.get(id);
    if (waiting?.running) throw new UnavailableError(`the enrolment of cluster ${op.name} is still running`);
    if (waiting) waiting.running = true;
    if (op.state === 'enrolling') {
      let why = 'the enrolment was interrupted before its hub was recorded';
      if (waiting) {
        try {
          waiting.result = await this.forward(op, waiting.ctx);
          return;
        } catch (err) {
          waiting.error = err;
          why = (err as Error).message;
        }
      }
      const moved = await this.table()
        .where({ id, state: 'enrolling' })
        .update({ state: 'undoing', last_error: why.slice(0, 1000) });
      if (!moved) return; // finished or taken over meanwhile
    }
    // Undoing gets the time it needs, not what is left of the request's.
    await this.backward(id, { requestId: call.requestId });
  }

  private async forward(op: EnrolmentRow, ctx: CallContext): Promise<clustersV1.EnrolledHub> {
    const call: CallOptions = { requestId: ctx.requestId, deadline: ctx.deadline, signal: ctx.signal };
    const bus = await this.orgTokens.createBusAccount({ orgId: Number(op.owner_id), clusterId: op.uid, productName: '' }, call);
    const moved = await this.table().where({ id: op.id, state: 'enrolling' }).update({ bus_account_id: bus.account!.id });
    if (!moved) throw new UnavailableError(`the enrolment of cluster ${op.name} was taken over`);
    fault('bus-account');
    const cluster = await this.clusters.createHub(op.request, ctx, {
      apply: async (trx) => {
        const done = await this.table(trx).where({ id: op.id, state: 'enrolling' }).update({ state: 'done' });
        if (!done) throw new UnavailableError(`the enrolment of cluster ${op.name} was taken over`);
      },
      undo: async (trx) => void (await this.table(trx).where({ id: op.id }).update({ state: 'enrolling' })),
    });
    await this.table().where({ id: op.id, state: 'done' }).delete();
    return { cluster, bus };
  }

  /**
   * Revokes the accounts the enrolment may have issued, unless its hub was recorded after all (a cluster of the uid
   * that is not this hub is someone else's: the accounts naming it are revoked all the same).
   */
  private async backward(id: number, call: CallOptions): Promise<void> {
    const op = await this.row(id);
    if (!op) return;
    const hub = await this.store.byUid(op.uid);
    const recorded = hub?.hub_id === null && Number(hub.owner_id) === Number(op.owner_id) && hub.name === op.name;
    if (!recorded) {
      const orgId = Number(op.owner_id);
      const listed = await this.orgTokens.listBusAccounts({ orgId }, call).catch((err: unknown) => {
        if (isTransient(err)) throw err;
        return { accounts: [] }; // no system admin (no account was ever issued) or no organization any more
      });
      const ids = new Set(listed.accounts.filter((a) => a.clusterId === op.uid && !a.revoked).map((a) => Number(a.id)));
      if (op.bus_account_id !== null) ids.add(Number(op.bus_account_id));
      for (const accountId of ids) {
        await this.orgTokens.revokeBusAccount({ orgId, id: accountId }, call).catch((err: unknown) => {
          if (isTransient(err)) throw err;
          if (!(err instanceof NotFoundError || err instanceof InputError)) throw err;
          this.log?.warn({ cluster: op.uid, accountId, err: (err as Error).message }, 'bus account of an undone enrolment not revoked');
        });
      }
    }
    await this.table().where({ id }).delete();
  }

  private async row(id: number): Promise<EnrolmentRow | undefined> {
    return this.table().where({ id }).first();
  }

  private table(trx?: Knex.Transaction) {
    return this.db.table(TABLE, trx);
  }
}

/** Kills the process after a step, for the test that proves a crash there leaves all or nothing. */
function fault(step: string): void {
  crashPoint(`enrolment-after-${step}`);
}
