import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { DomainError, HTTP_STATUS_OF, InputError, NotAllowedError } from '@platform/errors';
import { isUniqueViolation, type Database, type EffectContext, type EffectHandler, type Outbox } from '@platform/db';
import type { Logger } from '@platform/service-kit';
import { hashAdminPassword, type StoredBinding } from '../installers/archive';
import { InstallersStore, type InstallerRow } from '../installers/installers-store';
import { isPlainObject, MARKETPLACES, type BindingInfo, type Marketplace } from '../binding-info';
import { actorOf, type SubscriberDirectory } from './subscribers';
import {
  SubscriptionsStore,
  type AuditEntry,
  type NotificationKey,
  type StoredAnswer,
  type SubscriptionRow,
  type SubscriptionState,
} from './subscriptions-store';

/** A notification that binds an installer: the first and third providers', and the second's BIND. */
export interface BindRequest {
  key: NotificationKey & { marketplace: Marketplace };
  eventTime?: Date;
  binding: BindingInfo;
  /** Provider detail kept on the subscription (never a secret). */
  billingDetails: Record<string, unknown>;
  /** The plan the marketplace names (second provider): product, and name for the contract. */
  plan?: { product?: string; name?: string };
  /** The notification without secrets, for the audit log. */
  data: unknown;
}

/** A second-provider PUT or DELETE: a provisioning state to record. */
export interface StateRequest {
  key: NotificationKey & { marketplace: Marketplace };
  eventTime?: Date;
  provisioningState: string;
  billingDetails: Record<string, unknown>;
  data: unknown;
}

/** Provisioning states of the second provider to subscription states. */
const STATE_OF: Record<'PUT' | 'DELETE', Record<string, SubscriptionState>> = {
  PUT: { Accepted: 'Pending', Succeeded: 'Running', Failed: 'Failed' },
  DELETE: { Deleting: 'Deleting', Deleted: 'Deleted', Failed: 'DeletionFailed' },
};

/** Effect kinds of the listener's outbox. */
const SUBSCRIBER = 'subscriber';
const REVOKE_CONTRACTS = 'revoke-contracts';
const FLAG_CLAIM = 'flag-claim';

interface SubscriberEffect {
  op: 'provision' | 'deprovision';
  marketplace: Marketplace;
  subscriptionId: string;
  product: string;
  contractName: string;
  backoffSeconds: number;
}

/** What a binding changed, so it can be taken back when provisioning the subscriber fails. */
interface BindChange {
  previous?: SubscriptionRow;
}

/**
 * The webhook listener's rules (docs/marketplaces.md): installers bound once, subscriptions and
 * their states, exactly-once effects for redelivered and racing notifications, and the audit log.
 */
export class MarketplaceListener {
  readonly installers: InstallersStore;
  readonly subscriptions: SubscriptionsStore;
  private outbox!: Outbox;
  /** Refusals already written to the audit log, so the route does not write them twice. */
  private readonly audited = new WeakSet<object>();

  constructor(
    db: Database,
    private readonly directory: SubscriberDirectory,
    private readonly log: Logger,
    private readonly opts: { claimBackoffSeconds: number },
  ) {
    this.installers = InstallersStore.create(db);
    this.subscriptions = SubscriptionsStore.create(db);
  }

  /** The outbox effects: provisioning the subscriber elsewhere, revoking its contracts, flagging its claim. */
  effects(): Record<string, EffectHandler> {
    const subscriber: EffectHandler<SubscriberEffect> = {
      apply: async (e, call) => {
        if (e.op === 'deprovision') return this.directory.deprovision(e, call);
        const current = await this.subscriptions.get(e.marketplace, e.subscriptionId);
        // The binding was taken back meanwhile: there is nothing to provision for.
        if (!current?.bounded_installer_id) return;
        const done = await this.directory.provision({ ...e, flagged: current.state === 'Running' }, call).catch(async (err: unknown) => {
          // Provisioning is several calls: one refused half-way (which the outbox does not invert, taking a
          // refusal for "nothing happened") must not leave the organization made before it.
          await this.directory.deprovision(e, call).catch(() => undefined);
          throw err;
        });
        await this.subscriptions.update(e.marketplace, e.subscriptionId, {
          subscriber_id: done.subscriberId,
          requester_id: done.requesterId,
          claim_id: done.claimId,
          contract_ids: done.contractIds,
        });
      },
      invert: (e) => ({ ...e, op: e.op === 'provision' ? 'deprovision' : 'provision' }),
    };
    const revoke: EffectHandler<{ contractIds: number[]; actor: string }> = {
      apply: (e, call) => this.directory.revokeContracts(e.contractIds, e.actor, call),
    };
    const flag: EffectHandler<{ claimId: string }> = { apply: (e, call) => this.directory.flagClaim(e.claimId, call) };
    return { [SUBSCRIBER]: subscriber, [REVOKE_CONTRACTS]: revoke, [FLAG_CLAIM]: flag };
  }

  /** Hands the listener its outbox (opened over `effects()`). */
  useOutbox(outbox: Outbox): void {
    this.outbox = outbox;
  }

  /** Prepares an installer (the site-admin route, beyond the spec; the demo seed). */
  async createInstaller(marketplace: string, optionsJson: string, actor: string): Promise<InstallerRow> {
    if (!MARKETPLACES.includes(marketplace as Marketplace)) throw new InputError('marketplace must be ProviderA, ProviderB or ProviderC');
    if (Buffer.byteLength(optionsJson || '{}') > 16_384) throw new InputError('options must be at most 16 KiB of JSON');
    let options: unknown;
    try {
      options = JSON.parse(optionsJson || '{}');
    } catch {
      throw new InputError('options must be a JSON object');
    }
    if (!isPlainObject(options)) throw new InputError('options must be a JSON object');
    if (options.product !== undefined) await this.checkProduct(options.product, 'options.product');
    return this.installers.insert({ id: randomUUID(), marketplace, options, created_by: actor.slice(0, 64) });
  }

  /**
   * Binds an installer to a subscription (created, or updated when the marketplace announced it before) and
   * provisions the subscriber: the standalone organization, its claim and a contract. A redelivery answers
   * as the first delivery did and changes nothing, and so does the same subscription binding its own installer
   * again with a new eventTime; of two subscriptions racing for one installer one wins, the other is 403. When provisioning fails the binding is taken back, so a failure leaves nothing behind.
   */
  async bind(req: BindRequest, call?: EffectContext): Promise<StoredAnswer> {
    const { key, binding } = req;
    const replay = await this.replayed(key, req.data);
    if (replay) return replay;
    const audit = (status: AuditEntry['status'], description: string, httpStatus: number) =>
      this.audit({ ...this.entry(key, req.data, httpStatus), status, description });
    try {
      const installer = await this.installers.get(binding.installerId);
      if (!installer) throw new InputError(`invalid binding info: installer ${binding.installerId} does not exist`);
      if (installer.marketplace !== key.marketplace) {
        throw new InputError(`invalid binding info: installer ${binding.installerId} is not an installer of ${key.marketplace}`);
      }
      if (installer.subscription_id !== null) throw new NotAllowedError(`installer ${binding.installerId} is already bound`);
      const product = await this.productOf(binding, installer, req.plan);
      const stored: StoredBinding = {
        clusterId: binding.clusterId,
        adminUsername: binding.adminUsername ?? 'admin',
        adminPasswordHash: binding.adminPassword ? hashAdminPassword(binding.adminPassword) : '',
        domainWhiteList: binding.domainWhiteList ?? [],
        ...(binding.providerAAccountID ? { providerAAccountID: binding.providerAAccountID } : {}),
        options: binding.options ?? {},
      };
      const answer: StoredAnswer = { status: 200, installerId: installer.id };
      await this.outbox.run<BindChange>(
        async (trx, stage) => {
          await this.subscriptions.recordAnswer(key, answer, trx);
          const previous = await this.subscriptions.get(key.marketplace, key.subscriptionId, trx);
          if (previous?.bounded_installer_id) {
            throw new NotAllowedError(`subscription ${key.subscriptionId} is already bound to installer ${previous.bounded_installer_id}`);
          }
          if (!(await this.installers.bind(installer.id, key.subscriptionId, stored, trx))) {
            throw new NotAllowedError(`installer ${installer.id} is already bound`);
          }
          const change = {
            bounded_installer_id: installer.id,
            billing_details: { ...previous?.billing_details, ...req.billingDetails },
            last_event_at: latest(previous?.last_event_at, req.eventTime),
          };
          // A deployment the marketplace already reported running stays Running; otherwise it is now Bounded.
          const state: SubscriptionState = previous?.state === 'Running' ? 'Running' : 'Bounded';
          if (previous) await this.subscriptions.update(key.marketplace, key.subscriptionId, { ...change, state }, trx);
          else await this.subscriptions.insert(key.marketplace, key.subscriptionId, { ...change, state }, trx);
          stage(SUBSCRIBER, {
            op: 'provision',
            marketplace: key.marketplace,
            subscriptionId: key.subscriptionId,
            product,
            contractName: contractName(key.marketplace, key.subscriptionId, req.plan?.name),
            backoffSeconds: this.opts.claimBackoffSeconds,
          } satisfies SubscriberEffect);
          return { previous };
        },
        {
          call,
          undo: async (trx, change) => {
            await this.subscriptions.forgetAnswer(key, trx);
            await this.installers.unbind(installer.id, key.subscriptionId, trx);
            if (change.previous) await this.subscriptions.restore(change.previous, trx);
            else await this.subscriptions.delete(key.marketplace, key.subscriptionId, trx);
          },
        },
      );
      await audit('Succeeded', `installer ${installer.id} bound to subscription ${key.subscriptionId}`, 200);
      return answer;
    } catch (err) {
      // The same delivery committed by a racing request first, or the installer is this subscription's already:
      // answer as the first delivery was answered, never with a refusal that did not happen.
      if (isUniqueViolation(err) || err instanceof NotAllowedError) {
        const again = await this.boundAlready(req);
        if (again) return again;
      }
      await audit('Failed', failureText(err), statusOf(err));
      this.markAudited(err);
      throw err;
    }
  }

  /**
   * A second-provider PUT or DELETE: the provisioning state becomes the subscription's state. A PUT makes the
   * subscription when it is new; a DELETE of an unknown one is 403, and revokes the subscription's contracts.
   * A notification older than the newest one applied is answered but changes nothing.
   */
  async recordState(req: StateRequest, call?: EffectContext): Promise<StoredAnswer> {
    const { key } = req;
    const event = key.eventType as 'PUT' | 'DELETE';
    const entry = (httpStatus: number) => this.entry(key, req.data, httpStatus);
    const state = STATE_OF[event][req.provisioningState];
    if (!state) {
      const err = new InputError(`provisioningState must be one of ${Object.keys(STATE_OF[event]).join(', ')} for ${event}`);
      await this.audit({ ...entry(400), status: 'Failed', description: err.message });
      this.markAudited(err);
      throw err;
    }
    const replay = await this.replayed(key, req.data);
    if (replay) return replay;
    const answer: StoredAnswer = { status: 200 };
    try {
      const outcome = await this.outbox.run(
        async (trx, stage) => {
          await this.subscriptions.recordAnswer(key, answer, trx);
          const current = await this.subscriptions.get(key.marketplace, key.subscriptionId, trx);
          if (!current && event === 'DELETE') throw new NotAllowedError(`subscription ${key.subscriptionId} does not exist`);
          if (current?.last_event_at && req.eventTime && req.eventTime < current.last_event_at) return 'stale' as const;
          // A site admin's revocation is final: the marketplace's later news does not bring it back.
          if (current?.state === 'Revoked') return 'revoked' as const;
          const billing_details = { ...current?.billing_details, ...req.billingDetails };
          const last_event_at = latest(current?.last_event_at, req.eventTime);
          if (current) await this.subscriptions.update(key.marketplace, key.subscriptionId, { state, billing_details, last_event_at }, trx);
          else await this.subscriptions.insert(key.marketplace, key.subscriptionId, { state, billing_details, last_event_at }, trx);
          if (event === 'DELETE' && current!.contract_ids.length > 0) {
            stage(REVOKE_CONTRACTS, { contractIds: current!.contract_ids, actor: actorOf(key.marketplace) });
          }
          if (state === 'Running' && current?.claim_id) stage(FLAG_CLAIM, { claimId: current.claim_id });
          return 'applied' as const;
        },
        { call },
      );
      const ignored = {
        stale: 'older than the newest notification applied; state left as it was',
        revoked: 'the subscription is revoked; state left as it was',
      };
      await this.audit(
        outcome === 'applied'
          ? { ...entry(200), status: 'Succeeded', description: `${event} ${req.provisioningState}: subscription ${state}` }
          : { ...entry(200), status: 'Ignored', description: ignored[outcome] },
      );
      return answer;
    } catch (err) {
      if (isUniqueViolation(err)) {
        const again = await this.replayed(key, req.data);
        if (again) return again;
      }
      await this.audit({ ...entry(statusOf(err)), status: 'Failed', description: failureText(err) });
      this.markAudited(err);
      throw err;
    }
  }

  /**
   * A site admin's revocation (DELETE /dashboard/marketplaces/…): the state becomes `Revoked` (final),
   * the subscription is no longer revocable, and its contracts are revoked through the outbox, so the state
   * and the revocation commit together and the contracts follow even across a crash. 400 when unknown or not
   * revocable (already revoked included).
   */
  async revoke(marketplace: string, subscriptionId: string, actor: string): Promise<SubscriptionRow> {
    await this.outbox.run(async (trx, stage) => {
      const current = await this.subscriptions.get(marketplace, subscriptionId, trx);
      if (!current) throw new InputError(`subscription ${subscriptionId} of ${marketplace} does not exist`);
      if (!current.is_revocable) throw new InputError(`subscription ${subscriptionId} of ${marketplace} is not revocable`);
      await this.subscriptions.update(marketplace, subscriptionId, { state: 'Revoked', is_revocable: false }, trx);
      if (current.contract_ids.length > 0) stage(REVOKE_CONTRACTS, { contractIds: current.contract_ids, actor });
    });
    await this.audit({
      marketplace,
      subscriptionId,
      status: 'Succeeded',
      operationType: 'REVOKE',
      description: `revoked by site admin ${actor}; its contracts are revoked`,
      data: { actor },
    });
    return (await this.subscriptions.get(marketplace, subscriptionId))!;
  }

  /**
   * Audits a notification refused before it reached `bind` or `recordState` (its payload was invalid), unless
   * they audited the refusal themselves.
   */
  async auditRefusal(err: unknown, entry: Omit<AuditEntry, 'status' | 'description' | 'data'>, notification: unknown): Promise<void> {
    if (typeof err === 'object' && err !== null && this.audited.has(err)) return;
    await this.audit({ ...entry, status: 'Failed', description: failureText(err), data: { notification, httpStatus: statusOf(err) } });
  }

  /** Writes an audit entry; a failure to do so is logged, never the notification's answer. */
  async audit(entry: AuditEntry): Promise<void> {
    await this.subscriptions
      .audit(entry)
      .catch((err) => this.log.error({ err, marketplace: entry.marketplace }, 'could not write a marketplace audit event'));
  }

  private markAudited(err: unknown): void {
    if (typeof err === 'object' && err !== null) this.audited.add(err);
  }

  /**
   * The answer to a binding that is in place already: the stored answer of this very delivery, or, when the
   * installer is bound to this same subscription with the same binding (the marketplace sent it again with a new
   * eventTime), its link, changing nothing. Undefined when another subscription or another binding (a different
   * cluster, admin, domains or options) holds the installer: that stays a 403. The admin password is not compared:
   * only its salted hash is kept.
   */
  private async boundAlready(req: BindRequest): Promise<StoredAnswer | undefined> {
    const { key, binding } = req;
    const replay = await this.replayed(key, req.data);
    if (replay) return replay;
    const installer = await this.installers.get(binding.installerId);
    if (installer?.marketplace !== key.marketplace || installer.subscription_id !== key.subscriptionId) return undefined;
    if (!installer.binding || !sameBinding(installer.binding, binding)) return undefined;
    await this.audit({
      ...this.entry(key, req.data, 200),
      status: 'Replayed',
      description: `installer ${installer.id} is already bound to subscription ${key.subscriptionId}; nothing changed`,
    });
    return { status: 200, installerId: installer.id };
  }

  /** The stored answer of an earlier delivery, audited as a replay. */
  private async replayed(key: NotificationKey, data: unknown): Promise<StoredAnswer | undefined> {
    const answer = await this.subscriptions.answered(key);
    if (answer)
      await this.audit({
        ...this.entry(key, data, answer.status),
        status: 'Replayed',
        description: 'redelivery of a notification already answered; nothing changed',
      });
    return answer;
  }

  private entry(key: NotificationKey, data: unknown, httpStatus: number): Omit<AuditEntry, 'status' | 'description'> {
    return {
      marketplace: key.marketplace,
      subscriptionId: key.subscriptionId,
      operationType: key.eventType || 'BIND',
      data: { notification: data, httpStatus },
    };
  }

  /** The contract's product: the binding's options, else the installer's, else the plan's; one of the catalog (400). */
  private async productOf(binding: BindingInfo, installer: InstallerRow, plan?: { product?: string }): Promise<string> {
    const named = binding.options?.product ?? installer.options.product ?? plan?.product;
    if (named === undefined)
      throw new InputError('invalid binding info: no product (bindingInfo.options.product, or the installer’s options)');
    return this.checkProduct(named, 'product');
  }

  private async checkProduct(product: unknown, field: string): Promise<string> {
    if (typeof product !== 'string' || !(await this.directory.isProduct(product))) {
      throw new InputError(`invalid binding info: ${field} ${JSON.stringify(product)} is not a product of the catalog`);
    }
    return product;
  }
}

/** The same binding as the stored one, secrets aside (a redelivery with a new eventTime carries the same info). */
const sameBinding = (stored: StoredBinding, binding: BindingInfo) =>
  isDeepStrictEqual(
    [stored.clusterId, stored.adminUsername, stored.domainWhiteList, stored.providerAAccountID ?? null, stored.options],
    [binding.clusterId, binding.adminUsername ?? 'admin', binding.domainWhiteList ?? [], binding.providerAAccountID ?? null, binding.options ?? {}],
  );

const latest = (a: Date | null | undefined, b: Date | undefined): Date | null => (a && b ? (a > b ? a : b) : (a ?? b ?? null));

const contractName = (marketplace: string, subscriptionId: string, plan?: string) =>
  `${marketplace} subscription ${subscriptionId}${plan ? ` (${plan})` : ''}`.slice(0, 255);

const statusOf = (err: unknown) => (err instanceof DomainError ? HTTP_STATUS_OF[err.kind] : 500);

/** An error as the audit log says it: a domain error's message, or "internal error" (details go to the log). */
const failureText = (err: unknown) =>
  err instanceof DomainError && err.kind !== 'internal' ? err.message : 'internal error while provisioning';
