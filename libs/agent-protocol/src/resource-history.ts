import { randomUUID } from 'node:crypto';
import { BusTimeoutError, type Bus, type Unsubscribe } from '@platform/bus';
import { DeadlineError, UnavailableError } from '@platform/errors';
import { agentV1 } from '@platform/proto';
import { AgentMessageRefused, open, seal, toBusPayload, type AccountLookup, type SigningKey } from './envelope';
import { subjectOf } from './subjects';

/** How long the platform waits for a cluster's answer unless told otherwise. */
export const RESOURCE_HISTORY_TIMEOUT_MS = 5_000;

export interface ResourceHistoryQuery {
  clusterUID: string;
  userId: number;
  licenseId: string;
  product: string;
  /** API group filter; every group when empty or left out. */
  group?: string;
  /** Resource filter; every resource when empty or left out. */
  resource?: string;
}

/**
 * Asks a member cluster for a resource history over `agent-rpc.v1.<clusterUID>.resource-history` and
 * verifies the sealed answer like any report. Throws DeadlineError (504) with a message naming the cluster
 * when no answer comes within `timeoutMs` (BusTimeoutError from the bus, also raised at once when nobody
 * listens on the in-process bus), UnavailableError (503) when the bus fails the request otherwise, the cluster
 * declines (`null`), its answer is refused or answers another request, and returns the reply, whose `error` the
 * cluster may have set.
 */
export async function fetchResourceHistory(
  bus: Bus,
  query: ResourceHistoryQuery,
  opts: { accounts: AccountLookup; timeoutMs?: number; now?: () => number },
): Promise<agentV1.ResourceHistoryReply> {
  const timeoutMs = opts.timeoutMs ?? RESOURCE_HISTORY_TIMEOUT_MS;
  const subject = subjectOf(query.clusterUID, 'resource-history');
  const request: agentV1.ResourceHistoryRequest = {
    requestId: randomUUID(),
    clusterUid: query.clusterUID,
    userId: query.userId,
    licenseId: query.licenseId,
    product: query.product,
    group: query.group ?? '',
    resource: query.resource ?? '',
    deadlineMs: (opts.now ?? Date.now)() + timeoutMs,
  };
  let answer: unknown;
  try {
    answer = await bus.request(subject, toBusPayload(agentV1.ResourceHistoryRequest.encode(request).finish()), timeoutMs);
  } catch (err) {
    if (err instanceof BusTimeoutError)
      throw new DeadlineError(`cluster ${query.clusterUID} did not answer the resource-history request within ${timeoutMs} ms`);
    // The bus logged what failed (its subject and code); the caller learns only that it did.
    throw new UnavailableError(
      `cluster ${query.clusterUID} could not be asked for its resource history: the message bus failed the request`,
    );
  }
  if (answer === null) throw new UnavailableError(`cluster ${query.clusterUID} declined the resource-history request`);
  try {
    const opened = await open(answer, { accounts: opts.accounts, subject, kinds: ['resource-history'] });
    const reply = opened.payload as agentV1.ResourceHistoryReply;
    if (reply.requestId !== request.requestId)
      throw new UnavailableError(`cluster ${query.clusterUID} answered another resource-history request`);
    return reply;
  } catch (err) {
    if (err instanceof AgentMessageRefused)
      throw new UnavailableError(`cluster ${query.clusterUID} sent a resource-history answer that was refused (${err.reason})`);
    throw err;
  }
}

/**
 * The member-cluster side: answers resource-history requests for one cluster with sealed replies. A request
 * that does not decode, is about another cluster or is past its deadline is declined without calling the
 * handler (answered with `null`: the bus always answers; past the deadline the asker has stopped waiting
 * anyway); a handler that throws answers with `error` set.
 */
export async function answerResourceHistory(
  bus: Bus,
  clusterUID: string,
  key: SigningKey,
  handler: (request: agentV1.ResourceHistoryRequest) => Promise<agentV1.ResourceHistoryItem[]>,
  opts: { now?: () => number } = {},
): Promise<Unsubscribe> {
  const now = opts.now ?? Date.now;
  return bus.reply(subjectOf(clusterUID, 'resource-history'), async (payload) => {
    if (typeof payload !== 'string') return null;
    let request: agentV1.ResourceHistoryRequest;
    try {
      request = agentV1.ResourceHistoryRequest.decode(new Uint8Array(Buffer.from(payload, 'base64')));
    } catch {
      return null;
    }
    if (request.clusterUid !== clusterUID || (request.deadlineMs > 0 && now() > request.deadlineMs)) return null;
    let reply: agentV1.ResourceHistoryReply;
    try {
      reply = { requestId: request.requestId, items: await handler(request), error: '' };
    } catch (err) {
      reply = { requestId: request.requestId, items: [], error: (err as Error).message || 'resource history unavailable' };
    }
    return toBusPayload(seal('resource-history', reply, key, { clusterUID }));
  });
}
