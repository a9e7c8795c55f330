import type { Bus, Unsubscribe } from '@platform/bus';
import { agentV1 } from '@platform/proto';
import { isUuid, PROTOCOL_VERSION } from './subjects';

/**
 * The platform's messages to a hub's agent (docs/agent-protocol.md, "Desired state"): the full desired state
 * of the hub's cluster sets, on `agent-desired.v1.<hubUID>.desired-state`. A root of its own: the stream is
 * AGENT_DESIRED (`agent-desired.>`), apart from the clusters' reports (AGENT), so no report consumer sees it and
 * an agent that was away finds the latest snapshot waiting on its durable consumer.
 */
export const DESIRED_ROOT = 'agent-desired';

/** The subject of a hub's desired state. */
export function desiredStateSubject(hubUID: string): string {
  if (!isUuid(hubUID)) throw new Error(`hub UID ${JSON.stringify(hubUID)} is not a lower-case UUID`);
  return `${DESIRED_ROOT}.${PROTOCOL_VERSION}.${hubUID}.desired-state`;
}

/** The name of a hub agent's durable consumer of its desired state. */
export const desiredStateConsumer = (hubUID: string) => `agent-desired-${hubUID}`;

/** Publishes a hub's desired state (durable), as base64 protobuf text like every agent message. */
export async function publishDesiredState(bus: Bus, state: agentV1.DesiredState): Promise<void> {
  await bus.publish(desiredStateSubject(state.hubUid), Buffer.from(agentV1.DesiredState.encode(state).finish()).toString('base64'));
}

/**
 * The agent side: hands each desired state of the hub that is newer than the last one applied to `apply`
 * (older or repeated generations, and messages that do not decode or are about another hub, are acknowledged
 * and skipped). `apply` throwing asks for redelivery.
 */
export async function consumeDesiredState(
  bus: Bus,
  hubUID: string,
  apply: (state: agentV1.DesiredState) => Promise<void>,
  opts: { lastGeneration?: number } = {},
): Promise<Unsubscribe> {
  let last = opts.lastGeneration ?? 0;
  return bus.consume({ durable: desiredStateConsumer(hubUID), subject: desiredStateSubject(hubUID) }, async (_subject, payload) => {
    const state = decodeDesiredState(payload);
    if (!state || state.hubUid !== hubUID || state.generation <= last) return;
    await apply(state);
    last = state.generation;
  });
}

/** A desired state from its bus payload; undefined when it is not one. */
export function decodeDesiredState(payload: unknown): agentV1.DesiredState | undefined {
  if (typeof payload !== 'string') return undefined;
  try {
    return agentV1.DesiredState.decode(new Uint8Array(Buffer.from(payload, 'base64')));
  } catch {
    return undefined;
  }
}
