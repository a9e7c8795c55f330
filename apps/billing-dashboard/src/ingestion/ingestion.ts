import { AgentMessageRefused, open, type AccountLookup, type OpenedMessage, type ReportKind } from '@platform/agent-protocol';
import type { Database } from '@platform/db';
import { agentV1 } from '@platform/proto';
import { Counter, type CounterChild } from '@platform/telemetry';
import { IngestionStore, type UsageSampleRow } from './ingestion-store';

/** The report kinds billing-dashboard applies (inventory belongs to clusters). */
export const BILLING_KINDS = ['license-usage', 'resource-event', 'usage-sample'] as const satisfies readonly ReportKind[];
export type BillingKind = (typeof BILLING_KINDS)[number];

/**
 * Verifies a message as `open` of @platform/agent-protocol does (form, subject, signature, account,
 * ownership) and returns it opened, or throws `AgentMessageRefused`. Any other error (the account lookup
 * failing) propagates, so the message is redelivered.
 */
export type OpenReport = (input: unknown, expected: { subject: string; kinds: readonly ReportKind[] }) => Promise<OpenedMessage>;

/** `open()` of @platform/agent-protocol over an account lookup (in production backed by orgs-teams' GetBusAccountByKey). */
export function openWithAccounts(accounts: AccountLookup): OpenReport {
  return (input, expected) => open(input, { ...expected, accounts });
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
  debug(obj: object, msg: string): void;
}

const outcomes = new Counter(
  'billing_agent_reports_total',
  'Agent reports billing-dashboard received, by kind and outcome (applied, duplicate, refused, invalid).',
  ['kind', 'outcome'],
);
const children = new Map<string, CounterChild>();
function count(kind: string, outcome: IngestionOutcome): void {
  const key = `${kind} ${outcome}`;
  let child = children.get(key);
  if (!child) children.set(key, (child = outcomes.child(kind, outcome)));
  child.inc();
}

const DAY_MS = 86_400_000;

/**
 * How long applied message ids are kept (as in clusters). An acknowledged message is never redelivered to its
 * durable consumer; what comes later is a replay, and every effect reconciles by its natural key anyway.
 */
export const SEEN_RETENTION_MS = 30 * DAY_MS;

/**
 * Applies agent reports to the billing schema: license usage, resource events and usage samples. Each
 * message is verified first (`openReport`), then applied in one transaction together with its id in
 * `agent_seen_messages`, so a redelivered or replayed message has the effect of one (docs/billing-ingestion.md).
 */
export class Ingestion {
  private readonly store: IngestionStore;

  constructor(
    private readonly db: Database,
    private readonly openReport: OpenReport,
    private readonly log: IngestionLog,
  ) {
    this.store = IngestionStore.create(db);
  }

  /**
   * Verifies and applies one delivery of a `kind` report that arrived on `subject`. Refused and invalid
   * messages are logged, counted and answered (the caller acknowledges them); a failure of the database or
   * of the account lookup throws, so the bus redelivers.
   */
  async receive(kind: BillingKind, subject: string, payload: unknown): Promise<IngestionOutcome> {
    let message: OpenedMessage;
    try {
      message = await this.openReport(payload, { subject, kinds: [kind] });
    } catch (err) {
      if (!(err instanceof AgentMessageRefused)) throw err;
      this.log.warn(
        { reason: err.reason, detail: err.detail, messageId: err.messageId, clusterUID: err.clusterUID, kind, subject },
        'agent report refused; not applied',
      );
      count(kind, 'refused');
      return 'refused';
    }
    const outcome = await this.apply(message);
    count(kind, outcome);
    return outcome;
  }

  /** Applies a verified message once: its effect and its id in one transaction; a repeated id changes nothing. */
  async apply(message: OpenedMessage): Promise<IngestionOutcome> {
    const problem = problemOf(message);
    if (problem) {
      this.log.warn(
        { problem, messageId: message.messageId, clusterUID: message.clusterUID, kind: message.kind, sender: message.senderPubKey },
        'agent report cannot be applied; dropped',
      );
      return 'invalid';
    }
    const outcome = await this.db.transaction(async (trx): Promise<IngestionOutcome> => {
      if (!(await this.store.remember(message, trx))) return 'duplicate';
      switch (message.kind) {
        case 'license-usage': {
          const p = message.payload;
          await this.store.recordLicenseUsage(
            {
              userId: p.userId,
              clusterUID: p.clusterUid,
              licenseId: p.licenseId,
              product: p.product,
              receivedAt: new Date(p.receivedAtMs),
            },
            trx,
          );
          break;
        }
        case 'resource-event': {
          const p = message.payload;
          await this.store.insertResourceEvent(
            {
              userId: p.userId,
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
            },
            trx,
          );
          break;
        }
        case 'usage-sample':
          await this.store.insertUsageSamples(sampleRows(message.payload), trx);
          break;
        default:
          throw new Error(`billing-dashboard does not apply ${message.kind} reports`);
      }
      return 'applied';
    });
    if (outcome === 'duplicate')
      this.log.debug({ messageId: message.messageId, kind: message.kind }, 'agent report applied before; skipped');
    return outcome;
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

/** Why a verified message can never be applied, or undefined when it can. */
function problemOf(message: OpenedMessage): string | undefined {
  switch (message.kind) {
    case 'license-usage': {
      const p = message.payload;
      if (!p.licenseId || !p.product) return 'license id and product are required';
      if (!validTime(p.receivedAtMs)) return 'received-at is not a positive time';
      return undefined;
    }
    case 'resource-event': {
      const p = message.payload;
      if (!p.licenseId || !p.product) return 'license id and product are required';
      if (!p.key) return 'key is required';
      if (!Number.isSafeInteger(p.version) || p.version < 1) return 'version must count from 1';
      if (!validTime(p.timestampMs)) return 'timestamp is not a positive time';
      if (!isJsonObject(p.resourceIdJson)) return 'resource_id_json is not a JSON object';
      if (p.partialObjectMetaJson && !isJsonObject(p.partialObjectMetaJson)) return 'partial_object_meta_json is not a JSON object';
      return undefined;
    }
    case 'usage-sample': {
      const p = message.payload;
      if (!p.product || !p.objectUid) return 'product and object UID are required';
      if (!validTime(p.startMs) || !validTime(p.endMs) || p.endMs <= p.startMs) return 'the interval must end after it starts';
      if (p.endMs - p.startMs > 62 * DAY_MS) return 'the interval is longer than two months';
      return undefined;
    }
    default:
      return `billing-dashboard does not apply ${message.kind} reports`;
  }
}

/** First instant of the UTC month after the one holding `ms`. */
function nextMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 8) + '01';
}

/**
 * The rows of one sample: split at UTC month boundaries, so each row lies in one month. The measures are
 * averages over the interval, so each part keeps them and weighs by its own duration (pro rata by time).
 */
export function sampleRows(p: agentV1.UsageSample): UsageSampleRow[] {
  const rows: UsageSampleRow[] = [];
  for (let start = p.startMs; start < p.endMs;) {
    const end = Math.min(p.endMs, nextMonthStart(start));
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
