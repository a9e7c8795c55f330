import { randomUUID } from 'node:crypto';
import type { KeyPair } from 'nkeys.js';
import { agentV1 } from '@platform/proto';
import { signerOf, verifySignatureAsync, type Signer } from './ed25519';
import { countOpened, countRefused } from './telemetry';
import { isUuid, kindEnum, kindName, parseSubject, type KindName } from './subjects';

/** The message each kind carries. */
export interface PayloadOf {
  inventory: agentV1.InventoryReport;
  'license-usage': agentV1.LicenseUsage;
  'resource-event': agentV1.ResourceEvent;
  'usage-sample': agentV1.UsageSample;
  'resource-history': agentV1.ResourceHistoryReply;
}

interface Codec<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(input: Uint8Array): T;
}

const CODEC: { [K in KindName]: Codec<PayloadOf[K]> } = {
  inventory: agentV1.InventoryReport,
  'license-usage': agentV1.LicenseUsage,
  'resource-event': agentV1.ResourceEvent,
  'usage-sample': agentV1.UsageSample,
  'resource-history': agentV1.ResourceHistoryReply,
};

/** The cluster a payload is about, where the payload names one (a resource-history reply does not). */
function payloadClusterUID<K extends KindName>(kind: K, payload: PayloadOf[K]): string | undefined {
  switch (kind) {
    case 'inventory':
      return (payload as agentV1.InventoryReport).hub?.uid;
    case 'license-usage':
    case 'resource-event':
    case 'usage-sample':
      return (payload as agentV1.LicenseUsage | agentV1.ResourceEvent | agentV1.UsageSample).clusterUid;
    default:
      return undefined;
  }
}

/**
 * Largest envelope accepted, in bytes. NATS' default max_payload is 1 MiB and the bus carries the envelope as
 * base64 (4/3 larger) inside JSON, so 512 KiB leaves room; a larger report is split by the sender.
 */
export const MAX_ENVELOPE_BYTES = 512 * 1024;

/** Domain separation: a signature made for this protocol version is never valid for anything else. */
export const SIGNING_CONTEXT = 'platform.agent.v1';

const encoder = new TextEncoder();
const NKEY_USER_PUBLIC = /^U[A-Z2-7]{55}$/;

/**
 * The bytes an envelope's signature covers: the ASCII header
 * `platform.agent.v1\n<messageId>\n<clusterUID>\n<kind token>\n<sentAtMs in decimal>\n<senderPubKey>\n`
 * followed by the payload bytes exactly as carried. Every header field is checked to hold no newline
 * (UUIDs, a kind token, digits, an nkey) before a signature is made or verified, so the split is unambiguous.
 */
export function signingBytes(fields: {
  messageId: string;
  clusterUID: string;
  kind: KindName;
  sentAtMs: number;
  senderPubKey: string;
  payload: Uint8Array;
}): Uint8Array {
  const header = encoder.encode(
    `${SIGNING_CONTEXT}\n${fields.messageId}\n${fields.clusterUID}\n${fields.kind}\n${fields.sentAtMs}\n${fields.senderPubKey}\n`,
  );
  const out = new Uint8Array(header.length + fields.payload.length);
  out.set(header, 0);
  out.set(fields.payload, header.length);
  return out;
}

/** An nkey user seed ("SU..." as text or bytes), a key pair made from one, or a Signer (`signerOf`, made once for many seals). */
export type SigningKey = string | Uint8Array | KeyPair | Signer;

function isSigner(key: SigningKey): key is Signer {
  return typeof key === 'object' && !(key instanceof Uint8Array) && typeof (key as Signer).publicKey === 'string';
}

export interface SealOptions {
  /** The cluster the message is about. Defaults to the payload's (the hub for inventory); required for a resource-history reply. */
  clusterUID?: string;
  /** Message id; a new random UUID by default. A sender that resends the same message keeps its id. */
  messageId?: string;
  /** Sealing time; now by default. */
  sentAt?: Date | number;
}

/**
 * Seals a payload: an Envelope (protobuf bytes) signed with the cluster's nkey. Throws on a payload that
 * could never be opened (a cluster UID that is not a lower-case UUID, or that differs from the payload's).
 */
export function seal<K extends KindName>(kind: K, payload: PayloadOf[K], key: SigningKey, opts: SealOptions = {}): Uint8Array {
  const fromPayload = payloadClusterUID(kind, payload);
  const clusterUID = opts.clusterUID ?? fromPayload;
  if (!clusterUID || !isUuid(clusterUID))
    throw new Error(`seal ${kind}: cluster UID ${JSON.stringify(clusterUID)} is not a lower-case UUID`);
  if (fromPayload !== undefined && fromPayload !== clusterUID)
    throw new Error(`seal ${kind}: the payload is about cluster ${fromPayload}, not ${clusterUID}`);
  const messageId = opts.messageId ?? randomUUID();
  if (!isUuid(messageId)) throw new Error(`seal ${kind}: message id ${JSON.stringify(messageId)} is not a lower-case UUID`);
  const sentAtMs = opts.sentAt === undefined ? Date.now() : typeof opts.sentAt === 'number' ? opts.sentAt : opts.sentAt.getTime();
  if (!Number.isSafeInteger(sentAtMs) || sentAtMs <= 0) throw new Error(`seal ${kind}: sent-at ${sentAtMs} is not a positive integer`);
  const signer = isSigner(key) ? key : signerOf(key);
  const senderPubKey = signer.publicKey;
  const body = CODEC[kind].encode(payload).finish();
  const signature = signer.sign(signingBytes({ messageId, clusterUID, kind, sentAtMs, senderPubKey, payload: body }));
  const bytes = agentV1.Envelope.encode({
    messageId,
    clusterUid: clusterUID,
    kind: kindEnum(kind),
    sentAtMs,
    payload: Buffer.from(body),
    senderPubKey,
    signature: Buffer.from(signature),
  }).finish();
  if (bytes.length > MAX_ENVELOPE_BYTES)
    throw new Error(`seal ${kind}: ${bytes.length} bytes is more than ${MAX_ENVELOPE_BYTES}; split the report`);
  return bytes;
}

/** Envelope bytes as the bus carries them (bus payloads are JSON): base64 text. */
export function toBusPayload(envelope: Uint8Array): string {
  return Buffer.from(envelope).toString('base64');
}

/** Why a message was refused. Ingestion counts refusals by reason and never applies a refused message. */
export type RefusalReason =
  /** Not an envelope of this protocol: undecodable, too large, a field out of form, a payload that does not decode or names another cluster. */
  | 'malformed'
  /** The subject it arrived on names another cluster or kind than the envelope, or the kind is not accepted there. */
  | 'subject-mismatch'
  /** The signature does not verify with the sender's public key over the signing bytes. */
  | 'bad-signature'
  /** No bus account holds the sender's public key. */
  | 'unknown-account'
  /** The sender's bus account is revoked. */
  | 'revoked-account'
  /** The sender's account may not report about the envelope's cluster (another owner's, or not enrolled). */
  | 'cluster-not-owned';

export const REFUSAL_REASONS: readonly RefusalReason[] = [
  'malformed',
  'subject-mismatch',
  'bad-signature',
  'unknown-account',
  'revoked-account',
  'cluster-not-owned',
];

/** A message refused by `open`; `messageId` and `clusterUID` are set when they could be read (unverified when the reason is malformed or a bad signature). */
export class AgentMessageRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly detail: string,
    readonly messageId?: string,
    readonly clusterUID?: string,
    /** The kind the envelope names, when it names a known one. */
    readonly kind?: KindName,
  ) {
    super(`agent message refused (${reason}): ${detail}`);
    this.name = 'AgentMessageRefused';
  }
}

/** A bus account as the caller's store knows it. */
export interface BusAccountRef {
  busPubKey: string;
  revoked: boolean;
  /** The caller's id of the account, carried through to the opened message. */
  id?: number;
  /** The owner (organization or user) of the account, carried through. */
  ownerId?: number;
}

/** Where `open` looks accounts and ownership up; errors it throws (a database down) propagate unchanged. */
export interface AccountLookup {
  /** The bus account holding this public key, revoked or not; undefined when none does. */
  accountOf(busPubKey: string): Promise<BusAccountRef | undefined>;
  /** Whether the account may send messages about this cluster (a cluster of the account's owner). */
  mayReportFor(account: BusAccountRef, clusterUID: string): Promise<boolean>;
}

export interface OpenExpectations {
  accounts: AccountLookup;
  /** The subject the message arrived on: it must name the envelope's cluster UID and kind. */
  subject?: string;
  /** Kinds accepted here (a consumer of one kind); any kind when left out. */
  kinds?: readonly KindName[];
}

/** A verified message: the sender signed it, its account is live and owns the cluster. */
export type OpenedMessage = {
  [K in KindName]: {
    kind: K;
    payload: PayloadOf[K];
    /** Idempotency key: applying a message id twice must have the effect of applying it once. */
    messageId: string;
    clusterUID: string;
    sentAt: Date;
    senderPubKey: string;
    account: BusAccountRef;
  };
}[KindName];

function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return new Uint8Array(Buffer.from(text, 'base64'));
}

/**
 * Opens an envelope (its bytes, or the base64 text the bus carries): checks form, subject, signature,
 * account and ownership, in that order, and returns the decoded payload. Throws AgentMessageRefused with a
 * typed reason otherwise. The message id is returned for deduplication, which is the ingestion's job.
 * Counts `agent_messages_opened_total{kind}` and `agent_messages_refused_total{reason,kind}`.
 */
export async function open(input: Uint8Array | string | unknown, expected: OpenExpectations): Promise<OpenedMessage> {
  try {
    const msg = await openUncounted(input, expected);
    countOpened(msg.kind);
    return msg;
  } catch (err) {
    if (err instanceof AgentMessageRefused) countRefused(err.reason, err.kind ?? 'unknown');
    throw err;
  }
}

async function openUncounted(input: Uint8Array | string | unknown, expected: OpenExpectations): Promise<OpenedMessage> {
  const bytes = typeof input === 'string' ? fromBase64(input) : input instanceof Uint8Array ? input : undefined;
  if (!bytes) throw new AgentMessageRefused('malformed', 'not envelope bytes or base64 text');
  if (bytes.length > MAX_ENVELOPE_BYTES)
    throw new AgentMessageRefused('malformed', `${bytes.length} bytes is more than ${MAX_ENVELOPE_BYTES}`);
  let env: agentV1.Envelope;
  try {
    env = agentV1.Envelope.decode(bytes);
  } catch (err) {
    throw new AgentMessageRefused('malformed', `not an envelope: ${(err as Error).message}`);
  }
  const ids = [isUuid(env.messageId) ? env.messageId : undefined, isUuid(env.clusterUid) ? env.clusterUid : undefined] as const;
  const known = kindName(env.kind);
  const refuse = (reason: RefusalReason, detail: string) => new AgentMessageRefused(reason, detail, ids[0], ids[1], known);
  if (!ids[0]) throw refuse('malformed', 'message id is not a lower-case UUID');
  if (!ids[1]) throw refuse('malformed', 'cluster UID is not a lower-case UUID');
  const kind = known;
  if (!kind) throw refuse('malformed', `unknown kind ${env.kind}`);
  if (!Number.isSafeInteger(env.sentAtMs) || env.sentAtMs <= 0) throw refuse('malformed', 'sent-at is not a positive time');
  if (!NKEY_USER_PUBLIC.test(env.senderPubKey)) throw refuse('malformed', 'sender public key is not an nkey user key');
  if (env.signature.length !== 64) throw refuse('malformed', 'signature is not 64 bytes');

  if (expected.subject !== undefined) {
    const named = parseSubject(expected.subject);
    if (!named || named.clusterUID !== env.clusterUid || named.kind !== kind)
      throw refuse('subject-mismatch', `a ${kind} message about ${env.clusterUid} arrived on ${expected.subject}`);
  }
  if (expected.kinds && !expected.kinds.includes(kind)) throw refuse('subject-mismatch', `kind ${kind} is not accepted here`);

  let verified: boolean;
  try {
    const signed = signingBytes({
      messageId: env.messageId,
      clusterUID: env.clusterUid,
      kind,
      sentAtMs: env.sentAtMs,
      senderPubKey: env.senderPubKey,
      payload: env.payload,
    });
    verified = await verifySignatureAsync(env.senderPubKey, signed, env.signature);
  } catch (err) {
    // nkeys.js refuses a key whose prefix or checksum is wrong.
    throw refuse('malformed', `sender public key: ${(err as Error).message}`);
  }
  if (!verified) throw refuse('bad-signature', `signature does not verify with ${env.senderPubKey}`);

  let payload: PayloadOf[typeof kind];
  try {
    payload = CODEC[kind].decode(env.payload);
  } catch (err) {
    throw refuse('malformed', `payload is not a ${kind}: ${(err as Error).message}`);
  }
  const about = payloadClusterUID(kind, payload);
  if (about !== undefined && about !== env.clusterUid)
    throw refuse('malformed', `the payload is about cluster ${JSON.stringify(about)}, the envelope about ${env.clusterUid}`);

  const account = await expected.accounts.accountOf(env.senderPubKey);
  if (!account) throw refuse('unknown-account', `no bus account holds ${env.senderPubKey}`);
  if (account.revoked) throw refuse('revoked-account', `bus account ${env.senderPubKey} is revoked`);
  if (!(await expected.accounts.mayReportFor(account, env.clusterUid)))
    throw refuse('cluster-not-owned', `bus account ${env.senderPubKey} may not report about cluster ${env.clusterUid}`);

  return {
    kind,
    payload,
    messageId: env.messageId,
    clusterUID: env.clusterUid,
    sentAt: new Date(env.sentAtMs),
    senderPubKey: env.senderPubKey,
    account,
  } as OpenedMessage;
}
