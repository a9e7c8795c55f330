import { agentV1, isUuid } from '@platform/proto';

/**
 * Subjects of the agent protocol (docs/agent-protocol.md).
 *
 * - Reports (stored, durable): `agent.v1.<clusterUID>.<kind>`. `streamOf()` of @platform/bus names a stream
 *   after the first token, so they all live in stream AGENT (`agent.>`), apart from every other subject.
 * - Requests a cluster answers (never stored): `agent-rpc.v1.<clusterUID>.<kind>`. They must stay outside
 *   any stream: a JetStream stream capturing a request subject would answer the request itself with its
 *   publish acknowledgement, so the asker would get an ack instead of the cluster's answer.
 *
 * The version token is the protocol's major version; the cluster UID is a lower-case UUID (hex digits and
 * dashes, valid in a NATS token: no `.`, `*`, `>` or white space).
 *
 * These are the subjects as the platform's code names them. On NATS each travels in the installation's namespace
 * (`<ns>.agent.v1...`, stream `<NS>_AGENT`), which a bus opened in it adds and takes off (@platform/bus).
 */
export const PROTOCOL_VERSION = 'v1';
export const REPORT_ROOT = 'agent';
export const REQUEST_ROOT = 'agent-rpc';

/** Every report of every version and cluster: the subject set of stream AGENT. */
export const ALL_REPORTS = `${REPORT_ROOT}.>`;

/** Kinds of report a cluster publishes (durable). */
export const REPORT_KINDS = ['inventory', 'license-usage', 'resource-event', 'usage-sample'] as const;
/** Kinds of request a cluster answers (request/reply); the reply is sealed with the same kind. */
export const REQUEST_KINDS = ['resource-history'] as const;

export type ReportKind = (typeof REPORT_KINDS)[number];
export type RequestKind = (typeof REQUEST_KINDS)[number];
export type KindName = ReportKind | RequestKind;

const KIND_OF: Record<KindName, agentV1.Kind> = {
  inventory: agentV1.Kind.KIND_INVENTORY,
  'license-usage': agentV1.Kind.KIND_LICENSE_USAGE,
  'resource-event': agentV1.Kind.KIND_RESOURCE_EVENT,
  'usage-sample': agentV1.Kind.KIND_USAGE_SAMPLE,
  'resource-history': agentV1.Kind.KIND_RESOURCE_HISTORY_REPLY,
};
const NAME_OF = new Map<agentV1.Kind, KindName>(Object.entries(KIND_OF).map(([name, kind]) => [kind, name as KindName]));

/** The enum value of a kind name. */
export function kindEnum(kind: KindName): agentV1.Kind {
  return KIND_OF[kind];
}

/** The kind name of an enum value, or undefined for an unknown or unspecified one. */
export function kindName(kind: agentV1.Kind): KindName | undefined {
  return NAME_OF.get(kind);
}

export function isReportKind(kind: string): kind is ReportKind {
  return (REPORT_KINDS as readonly string[]).includes(kind);
}

export function isRequestKind(kind: string): kind is RequestKind {
  return (REQUEST_KINDS as readonly string[]).includes(kind);
}

// One definition of the UUID form for every app; re-exported so the protocol's users need one import.
export { isUuid };

/** The subject a cluster publishes a report on, or is asked a request on. */
export function subjectOf(clusterUID: string, kind: KindName): string {
  if (!isUuid(clusterUID)) throw new Error(`cluster UID ${JSON.stringify(clusterUID)} is not a lower-case UUID`);
  if (isReportKind(kind)) return `${REPORT_ROOT}.${PROTOCOL_VERSION}.${clusterUID}.${kind}`;
  if (isRequestKind(kind)) return `${REQUEST_ROOT}.${PROTOCOL_VERSION}.${clusterUID}.${kind}`;
  throw new Error(`unknown agent message kind ${JSON.stringify(kind)}`);
}

/** Filter of one report kind from every cluster, for a durable consumer (e.g. `agent.v1.*.inventory`). */
export function reportFilter(kind: ReportKind): string {
  return `${REPORT_ROOT}.${PROTOCOL_VERSION}.*.${kind}`;
}

/** Cluster UID and kind named by a subject of this protocol version, or undefined when it is not one. */
export function parseSubject(subject: string): { clusterUID: string; kind: KindName } | undefined {
  const tokens = subject.split('.');
  if (tokens.length !== 4 || tokens[1] !== PROTOCOL_VERSION || !isUuid(tokens[2])) return undefined;
  const [root, , clusterUID, kind] = tokens;
  if (root === REPORT_ROOT && isReportKind(kind)) return { clusterUID, kind };
  if (root === REQUEST_ROOT && isRequestKind(kind)) return { clusterUID, kind };
  return undefined;
}
