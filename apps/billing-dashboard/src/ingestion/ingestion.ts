import { AgentMessageRefused, open, type AccountLookup, type OpenedMessage, type ReportKind } from '@platform/agent-protocol';
import type { BusMessage } from '@platform/bus';
import type { Database } from '@platform/db';
import { agentV1 } from '@platform/proto';
import { Counter } from '@platform/telemetry';
import { attribute, isBillingReport, type Attribution, type BillingReport, type ClaimRefusal, type LicensingRecords } from './attribution';
import { IngestionStore, type LicenseUsageRow, type ResourceEventRow, type UsageSampleRow } from './ingestion-store';

/** The report kinds billing-dashboard applies (inventory belongs to clusters). */
export const BILLING_KINDS = ['license-usage', 'resource-event', 'usage-sample'] as const satisfies readonly ReportKind[];
export type BillingKind = (typeof BILLING_KINDS)[number];

/**
 * Verifies a message as `open` of @platform/agent-protocol does (form, subject, signature, account,
 * ownership) and returns it opened, or throws `AgentMessageRefused`. Any other error (the account lookup
 * failing) propagates, so the message is redelivered.
 */
export interface OpenReport {
  (input: unknown, expected: { subject: string; kinds: readonly ReportKind[] }): Promise<OpenedMessage>;
  /** The opener for one batch: account and ownership lookups asked once per key within it. */
  forBatch?(): OpenReport;
}

/**
 * `open()` of @platform/agent-protocol over an account lookup (in production a `BusAccountDirectory`: orgs-teams'
 * GetBusAccountByKey and clusters' GetCluster). A lookup with `forBatch` shares its answers within a batch.
 */
export function openWithAccounts(accounts: AccountLookup & { forBatch?(): AccountLookup }): OpenReport {
  const opener: OpenReport = (input, expected) => open(input, { ...expected, accounts });
  opener.forBatch = () => {
    const shared = accounts.forBatch?.() ?? accounts;
    return (input, expected) => open(input, { ...expected, accounts: shared });
  };
  return opener;
}

/**
 * What became of one delivery: `applied` (its effect and id committed), `duplicate` (its id was applied
 * before: skipped), `refused` (it did not verify: never applied), `invalid` (it verified but its content can
 * never be applied, e.g. an interval that ends before it starts). Only an error thrown asks for redelivery.
 */
export type IngestionOutcome = 'applied' | 'duplicate' | 'refused' | 'invalid';

/** The part of a logger ingestion uses (a pino logger fits). */
export interface IngestionLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

const outcomes = new Counter(
  'billing_agent_reports_total',
  'Agent reports billing-dashboard received, by kind and outcome (applied, duplicate, refused, invalid).',
  ['kind', 'outcome'],
);
// Counter.child keeps each label set's child: no cache of our own.
const count = (kind: string, outcome: IngestionOutcome) => outcomes.child(kind, outcome).inc();

const claimsRefused = new Counter(
  'billing_agent_claims_refused_total',
  'Claims of agent reports billing-dashboard refused, by kind and reason: the report was attributed from the platform’s records instead, or (license-of-other-cluster, owner-unknown) not applied.',
  ['kind', 'reason'],
);
const countClaim = (kind: string, reason: ClaimRefusal) => claimsRefused.child(kind, reason).inc();

/** A verified report with what the platform attributes it to. */
type Attributed = { message: BillingReport; attribution: Extract<Attribution, { userId: number }> };

const DAY_MS = 86_400_000;

/**
 * How long applied message ids are kept (as in clusters). An acknowledged message is never redelivered to its
 * durable consumer; what comes later is a replay, and every effect reconciles by its natural key anyway.
 */
export const SEEN_RETENTION_MS = 30 * DAY_MS;

/**
 * Applies agent reports to the billing schema: license usage, resource events and usage samples. Each
 * message is verified first (`openReport`), attributed to a user and contract from the platform's records
 * (`records`: never from the report's claims), then applied in one transaction together with its id in
 * `agent_seen_messages`, so a redelivered or replayed message has the effect of one (docs/billing-ingestion.md).
 */
export class Ingestion {
  private readonly store: IngestionStore;

  constructor(
    private readonly db: Database,
    private readonly openReport: OpenReport,
    private readonly records: LicensingRecords,
    private readonly log: IngestionLog,
    /** Tells the dashboard's readers that reports were applied (after the commit, before they are acknowledged). */
    private readonly applied: () => Promise<void> = async () => {},
  ) {
    this.store = IngestionStore.create(db);
  }

  /**
   * Verifies and applies one delivery of a `kind` report that arrived on `subject`. Refused and invalid
   * messages are logged, counted and answered (the caller acknowledges them); a failure of the database or
   * of the account lookup throws, so the bus redelivers.
   */
  async receive(kind: BillingKind, subject: string, payload: unknown): Promise<IngestionOutcome> {
    const [outcome] = await this.handle(kind, [{ subject, payload }], this.openReport);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /**
   * Verifies and applies a batch of deliveries of one kind (a consumer's `consumeBatches` handler): answers,
   * per message, whether it is done (applied, duplicate, refused or invalid: acknowledge) or failed (the
   * database, the account lookup or the licensing records: redeliver). The batch is written in one transaction;
   * when that fails, each message is tried alone, so one message that cannot be written does not hold the others back.
   */
  async receiveBatch(kind: BillingKind, deliveries: BusMessage[]): Promise<boolean[]> {
    const outcomes = await this.handle(kind, deliveries, this.openReport.forBatch?.() ?? this.openReport);
    return outcomes.map((outcome, i) => {
      if (!(outcome instanceof Error)) return true;
      this.log.error({ err: outcome, kind, subject: deliveries[i].subject }, 'applying an agent report failed; it will be redelivered');
      return false;
    });
  }

  /** Opens, checks and applies deliveries; each one's outcome, or the error that asks for its redelivery. */
  private async handle(kind: BillingKind, deliveries: BusMessage[], openReport: OpenReport): Promise<(IngestionOutcome | Error)[]> {
    const results: (IngestionOutcome | Error)[] = new Array(deliveries.length);
    const verified: { index: number; message: BillingReport }[] = [];
    const opened = await Promise.all(
      deliveries.map(({ subject, payload }) =>
        openReport(payload, { subject, kinds: [kind] }).then(
          (message) => ({ message }),
          (error: unknown) => ({ error }),
        ),
      ),
    );
    opened.forEach((result, index) => {
      if ('message' in result) {
        const message = result.message;
        if (this.isApplicable(message) && isBillingReport(message)) verified.push({ index, message });
        else results[index] = 'invalid';
      } else if (result.error instanceof AgentMessageRefused) {
        const err = result.error;
        this.log.warn(
          { reason: err.reason, detail: err.detail, messageId: err.messageId, clusterUID: err.clusterUID, kind, subject: deliveries[index].subject },
          'agent report refused; not applied',
        );
        results[index] = 'refused';
      } else {
        results[index] = result.error instanceof Error ? result.error : new Error(String(result.error));
      }
    });
    const toApply = await this.attributeAll(verified, results);
    if (toApply.length > 0) {
      try {
        const applied = await this.applyAll(toApply.map((x) => x.item));
        toApply.forEach(({ index }, i) => (results[index] = applied[i]));
      } catch (err) {
        if (toApply.length === 1) results[toApply[0].index] = err as Error;
        else {
          this.log.warn({ err, kind, messages: toApply.length }, 'applying a batch of agent reports failed; applying them one by one');
          for (const { index, item } of toApply) {
            results[index] = await this.applyAll([item]).then(
              ([outcome]) => outcome,
              (e: Error) => e,
            );
          }
        }
      }
    }
    for (const outcome of results) if (!(outcome instanceof Error)) count(kind, outcome);
    return results;
  }

  /**
   * Attributes verified reports (docs/billing-ingestion.md, "Attribution"): answers those to apply, and sets the
   * result of the others: `refused` (logged and counted) when the platform's records contradict the report, or the
   * error of the records (all of them are redelivered).
   */
  private async attributeAll(
    verified: { index: number; message: BillingReport }[],
    results: (IngestionOutcome | Error)[],
  ): Promise<{ index: number; item: Attributed }[]> {
    if (verified.length === 0) return [];
    let attributions: Attribution[];
    try {
      attributions = await attribute(verified.map((v) => v.message), this.records);
    } catch (err) {
      for (const { index } of verified) results[index] = err instanceof Error ? err : new Error(String(err));
      return [];
    }
    const toApply: { index: number; item: Attributed }[] = [];
    verified.forEach(({ index, message }, i) => {
      const attribution = attributions[i];
      if ('refused' in attribution) {
        this.log.warn(
          {
            reason: attribution.refused,
            detail: attribution.detail,
            messageId: message.messageId,
            clusterUID: message.clusterUID,
            kind: message.kind,
          },
          'agent report refused: the platform’s records contradict it; not applied',
        );
        countClaim(message.kind, attribution.refused);
        results[index] = 'refused';
      } else toApply.push({ index, item: { message, attribution } });
    });
    return toApply;
  }

  /** Whether a verified message can be applied; logs why not. */
  private isApplicable(message: OpenedMessage): boolean {
    const problem = problemOf(message);
    if (problem)
      this.log.warn(
        { problem, messageId: message.messageId, clusterUID: message.clusterUID, kind: message.kind, sender: message.senderPubKey },
        'agent report cannot be applied; dropped',
      );
    return !problem;
  }

  /** Applies a verified message once: attributed, its effect and its id in one transaction; a repeated id changes nothing. */
  async apply(message: OpenedMessage): Promise<IngestionOutcome> {
    if (!this.isApplicable(message) || !isBillingReport(message)) return 'invalid';
    const results: (IngestionOutcome | Error)[] = [];
    const [toApply] = await this.attributeAll([{ index: 0, message }], results);
    if (!toApply) {
      if (results[0] instanceof Error) throw results[0];
      return results[0];
    }
    return (await this.applyAll([toApply.item]))[0];
  }

  /**
   * Applies verified, attributed messages in one transaction: their ids in `agent_seen_messages`, and the
   * effects of those whose id is new (a repeat, in an earlier batch or earlier in this one, is `duplicate`),
   * under the user and contract attributed. Claims the attribution replaced are counted once the transaction
   * has committed, for the messages applied (not for repeats, nor for a transaction that failed and is retried).
   */
  private async applyAll(items: Attributed[]): Promise<IngestionOutcome[]> {
    const messages = items.map((x) => x.message);
    const attributionOf = new Map(items.map((x) => [x.message, x.attribution]));
    const { outcomes, fresh } = await this.db.transaction(async (trx) => {
      const fresh = await this.store.rememberAll(messages, trx);
      const outcomes = messages.map((m): IngestionOutcome => (fresh.has(m) ? 'applied' : 'duplicate'));
      const usages: LicenseUsageRow[] = [];
      const events: ResourceEventRow[] = [];
      const samples: UsageSampleRow[] = [];
      for (const message of fresh) {
        const { userId, contractId } = attributionOf.get(message)!;
        switch (message.kind) {
          case 'license-usage': {
            const p = message.payload;
            usages.push({
              userId,
              clusterUID: p.clusterUid,
              licenseId: p.licenseId,
              product: p.product,
              receivedAt: new Date(p.receivedAtMs),
            });
            break;
          }
          case 'resource-event': {
            const p = message.payload;
            events.push({
              userId,
              clusterUID: p.clusterUid,
              licenseId: p.licenseId,
              product: p.product,
              group: p.group,
              resource: p.resource,
              resourceId: JSON.parse(p.resourceIdJson) as object,
              key: p.key,
              version: p.version,
              eventAt: new Date(p.timestampMs),
              partialObjectMeta: p.partialObjectMetaJson ? (JSON.parse(p.partialObjectMetaJson) as object) : {},
            });
            break;
          }
          case 'usage-sample':
            samples.push(...sampleRows({ ...message.payload, userId, contractId }));
            break;
        }
      }
      await this.store.recordLicenseUsages(usages, trx);
      await this.store.insertResourceEvents(events, trx);
      await this.store.insertUsageSamples(samples, trx);
      const repeats = messages.filter((m) => !fresh.has(m));
      if (repeats.length > 0)
        this.log.debug({ messageIds: repeats.map((m) => m.messageId), kind: repeats[0].kind }, 'agent reports applied before; skipped');
      return { outcomes, fresh };
    });
    if (fresh.size > 0) await this.applied();
    for (const message of fresh) {
      const { ignored } = attributionOf.get(message)!;
      if (ignored.length === 0) continue;
      for (const { reason } of ignored) countClaim(message.kind, reason);
      this.log.warn(
        { claims: ignored, messageId: message.messageId, clusterUID: message.clusterUID, kind: message.kind },
        'agent report’s claims refused; applied as the platform’s records attribute it',
      );
    }
    return outcomes;
  }

  /** Drops the ids of messages applied before `before` (retention, past the stream's maximum age). */
  forgetSeenBefore(before: Date): Promise<number> {
    return this.store.forgetBefore(before);
  }

  /** Forgets ids older than `retentionMs` now and every `everyMs`; returns how to stop. A failure is logged and tried again later. */
  pruneSeenPeriodically(retentionMs = SEEN_RETENTION_MS, everyMs = 3_600_000): () => void {
    const prune = () =>
      this.forgetSeenBefore(new Date(Date.now() - retentionMs)).then(
        (n) => n && this.log.info({ forgotten: n }, 'old agent message ids forgotten'),
        (err: unknown) => this.log.warn({ err }, 'forgetting old agent message ids failed; trying again later'),
      );
    void prune();
    const timer = setInterval(prune, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

const validTime = (ms: number) => Number.isSafeInteger(ms) && ms > 0;

/**
 * The first field longer than its column allows (the limits of migrations/20261122010000_agent_reports.ts), so
 * such a report is `invalid` at once instead of failing its transaction on every redelivery.
 */
function tooLong(fields: object, limits: Record<string, number>): string | undefined {
  for (const [name, limit] of Object.entries(limits)) {
    const value = (fields as Record<string, unknown>)[name];
    if (typeof value === 'string' && value.length > limit) return `${name} is longer than ${limit} characters`;
  }
  return undefined;
}
const COMMON_LIMITS = { licenseId: 255, product: 255 };

/** Why a verified message can never be applied, or undefined when it can. */
function problemOf(message: OpenedMessage): string | undefined {
  switch (message.kind) {
    case 'license-usage': {
      const p = message.payload;
      if (!p.licenseId || !p.product) return 'license id and product are required';
      if (!validTime(p.receivedAtMs)) return 'received-at is not a positive time';
      return tooLong(p, COMMON_LIMITS);
    }
    case 'resource-event': {
      const p = message.payload;
      if (!p.licenseId || !p.product) return 'license id and product are required';
      if (!p.key) return 'key is required';
      if (!Number.isSafeInteger(p.version) || p.version < 1) return 'version must count from 1';
      if (!validTime(p.timestampMs)) return 'timestamp is not a positive time';
      if (!isJsonObject(p.resourceIdJson)) return 'resource_id_json is not a JSON object';
      if (p.partialObjectMetaJson && !isJsonObject(p.partialObjectMetaJson)) return 'partial_object_meta_json is not a JSON object';
      return tooLong(p, { ...COMMON_LIMITS, group: 255, resource: 255, key: 1024 });
    }
    case 'usage-sample': {
      const p = message.payload;
      if (!p.product || !p.objectUid) return 'product and object UID are required';
      if (!validTime(p.startMs) || !validTime(p.endMs) || p.endMs <= p.startMs) return 'the interval must end after it starts';
      if (p.endMs - p.startMs > 62 * DAY_MS) return 'the interval is longer than two months';
      return tooLong(
        p,
        { ...COMMON_LIMITS, clusterName: 255, hosting: 64, namespace: 255, namespaceUid: 64, group: 255, kind: 255, name: 255, objectUid: 64, version: 64 },
      );
    }
    default:
      return `billing-dashboard does not apply ${message.kind} reports`;
  }
}

/** First instant of the UTC day after the one holding `ms` (a month boundary is a day boundary too). */
function nextDayStart(ms: number): number {
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
}

function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 8) + '01';
}

/**
 * The rows of one sample: split at UTC day boundaries, so each row lies in one day and so in one month: a month's
 * report counts whole rows, and a daily series (the usage views' `daily`, the PDF summary's chart) puts each row on
 * its day, the same way everywhere. The measures are averages over the interval, so each part keeps them and
 * weighs by its own duration (pro rata by time).
 */
export function sampleRows(p: agentV1.UsageSample): UsageSampleRow[] {
  const rows: UsageSampleRow[] = [];
  for (let start = p.startMs; start < p.endMs;) {
    const end = Math.min(p.endMs, nextDayStart(start));
    rows.push({
      month: monthOf(start),
      product: p.product,
      contractId: p.contractId,
      licenseId: p.licenseId,
      userId: p.userId,
      clusterUID: p.clusterUid,
      clusterName: p.clusterName,
      hosting: p.hosting,
      namespace: p.namespace,
      namespaceUID: p.namespaceUid,
      group: p.group,
      kind: p.kind,
      name: p.name,
      objectUID: p.objectUid,
      version: p.version,
      topology: topologyName(p.topology),
      replicas: p.replicas,
      startAt: new Date(start),
      endAt: new Date(end),
      resources: p.resources.map((r) => ({ resource: r.resource, request: r.request, limit: r.limit, used: r.used })),
    });
    start = end;
  }
  return rows;
}

function topologyName(t: agentV1.Topology): string {
  switch (t) {
    case agentV1.Topology.TOPOLOGY_STANDALONE:
      return 'STANDALONE';
    case agentV1.Topology.TOPOLOGY_CLUSTER:
      return 'CLUSTER';
    default:
      return 'UNSPECIFIED';
  }
}
