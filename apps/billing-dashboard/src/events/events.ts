import { fetchResourceHistory, isUuid, RESOURCE_HISTORY_TIMEOUT_MS, type AccountLookup } from '@platform/agent-protocol';
import type { Bus } from '@platform/bus';
import type { Database } from '@platform/db';
import { DeadlineError, InputError, NotFoundError, UnavailableError } from '@platform/errors';
import type { eventsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { EventsStore, type EventsAggregate, type EventRow, type LicensedProduct, type RawEventRow } from './events-store';

/** The longest `lastDays` window of events/, and its default. */
export const MAX_LAST_DAYS = 14;
/** Time kept back from the caller's deadline, so the cluster's silence is answered as a 504 naming it, not cut off. */
const DEADLINE_MARGIN_MS = 250;
const DAY_MS = 86_400_000;

export interface ResourceEventsOptions {
  /** Where the resource history is asked (the bus ingestion consumes from). */
  bus: Bus;
  /** Verifies the cluster's sealed answer: the bus-account lookup of ingestion. */
  accounts: AccountLookup;
  /** How long a cluster has to answer; default RESOURCE_HISTORY_TIMEOUT_MS (5 s). */
  timeoutMs?: number;
  /** The clock of the lastDays window (tests pin it); the bus request keeps real time, its deadline travels to the cluster. */
  now?: () => number;
}

/**
 * The licensed-resource rows of the admin dashboard (`.../products/{productName}/resources`,
 * `events/`, `events-histories`, `events/raw-event`; docs/resource-events.md): the resource history asked live
 * from the member cluster, and what the clusters reported as resource events, aggregated in the database.
 */
export class ResourceEvents {
  private readonly store: EventsStore;
  private readonly now: () => number;

  constructor(
    db: Database,
    private readonly opts: ResourceEventsOptions,
  ) {
    this.store = EventsStore.create(db);
    this.now = opts.now ?? Date.now;
  }

  /**
   * Asks the cluster over the bus: 404 when the product was never reported under the license there (no cluster
   * is bothered about it), 504 when the cluster does not answer in time, 503 when it declines or says it cannot.
   */
  async resourceHistory(ref: eventsV1.LicensedProductRef | undefined, filter: { group: string; resource: string }, ctx?: CallContext) {
    const p = licensedProduct(ref);
    if (!(await this.store.reported(p)))
      throw new NotFoundError(`no ${p.product} of user ${p.userId} under license ${p.licenseId} was reported by cluster ${p.clusterUid}`);
    const timeoutMs = this.timeoutWithin(ctx?.deadline);
    const reply = await fetchResourceHistory(
      this.opts.bus,
      {
        clusterUID: p.clusterUid,
        userId: p.userId,
        licenseId: p.licenseId,
        product: p.product,
        group: filter.group,
        resource: filter.resource,
      },
      { accounts: this.opts.accounts, timeoutMs },
    );
    if (reply.error) throw new UnavailableError(`cluster ${p.clusterUid} could not answer the resource-history request: ${reply.error}`);
    // The cluster applies the group and resource filters (ResourceHistoryRequest): keys are its own to form.
    return { items: reply.items };
  }

  /** Events of the last `lastDays` days (1..14; 0 is the default, 14), newest first. */
  async recent(ref: eventsV1.LicensedProductRef | undefined, lastDays: number): Promise<EventRow[]> {
    const p = licensedProduct(ref);
    const days = lastDays || MAX_LAST_DAYS;
    if (!Number.isInteger(days) || days < 1 || days > MAX_LAST_DAYS)
      throw new InputError(`lastDays must be an integer from 1 to ${MAX_LAST_DAYS}`);
    return this.store.recent(p, new Date(this.now() - days * DAY_MS));
  }

  /** The EventsReport of the events matching `group`, `resource` and `rid` (a resource-history key), each optional. */
  async report(
    ref: eventsV1.LicensedProductRef | undefined,
    f: { group: string; resource: string; rid: string },
  ): Promise<EventsAggregate> {
    const p = licensedProduct(ref);
    const agg = await this.store.aggregate(p, { group: f.group, resource: f.resource, key: f.rid });
    return { ...agg, group: f.group || agg.group, resource: f.resource || agg.resource, key: f.rid || agg.key };
  }

  /** The stored value of event (key, version); 404 when there is none. */
  async raw(ref: eventsV1.LicensedProductRef | undefined, key: string, version: number): Promise<RawEventRow> {
    const p = licensedProduct(ref);
    if (!key) throw new InputError('key is required');
    if (!Number.isSafeInteger(version) || version < 0) throw new InputError('version must be an unsigned integer');
    const row = await this.store.raw(p, key, version);
    if (!row) throw new NotFoundError(`no event ${key} version ${version} of ${p.product} under license ${p.licenseId}`);
    return row;
  }

  /** The cluster's time to answer: the configured timeout, shortened to end before the caller's deadline. */
  private timeoutWithin(deadline: Date | undefined): number {
    const timeout = this.opts.timeoutMs ?? RESOURCE_HISTORY_TIMEOUT_MS;
    if (!deadline) return timeout;
    const left = deadline.getTime() - Date.now() - DEADLINE_MARGIN_MS;
    if (left <= 0) throw new DeadlineError("the caller's deadline passed before the cluster was asked");
    return Math.min(timeout, left);
  }
}

/** The licensed product of a request, validated: a positive user id, a UUID cluster, a license and a product. */
function licensedProduct(ref: eventsV1.LicensedProductRef | undefined): LicensedProduct {
  if (!ref || !(ref.userId > 0)) throw new InputError('userId must be a positive integer');
  if (!isUuid(ref.clusterUid)) throw new InputError('clusterUid must be a lower-case UUID');
  if (!ref.licenseId) throw new InputError('licenseId is required');
  if (!ref.product) throw new InputError('product is required');
  return { userId: ref.userId, clusterUid: ref.clusterUid, licenseId: ref.licenseId, product: ref.product };
}
