import { randomUUID } from 'node:crypto';
import { InProcessBus } from '@platform/bus';
import { eventually } from '@platform/testing';
import { agentV1 } from '@platform/proto';
import { consumeDesiredState, desiredStateSubject, publishDesiredState } from './desired-state';

// The desired state from the platform to a hub's agent: only newer generations of its own hub are applied.

const state = (hubUid: string, generation: number): agentV1.DesiredState => ({
  hubUid,
  generation,
  issuedAtMs: 1_780_000_000_000 + generation,
  clusters: [],
  managedFeatures: ['platform-agent'],
  clientOrgImports: [],
  connectedUsers: [],
});

describe('desired state on the bus', () => {
  it('applies each newer generation once, and skips older ones, other hubs and payloads that are no state', async () => {
    const bus = new InProcessBus();
    const hub = randomUUID();
    const applied: number[] = [];
    const stop = await consumeDesiredState(bus, hub, async (s) => void applied.push(s.generation));
    try {
      await publishDesiredState(bus, state(hub, 2));
      await publishDesiredState(bus, state(hub, 1));
      await publishDesiredState(bus, state(hub, 2));
      await bus.publish(desiredStateSubject(hub), 'not base64 protobuf at all!');
      // Another hub's state on this hub's subject is not this hub's to apply.
      const foreign = Buffer.from(agentV1.DesiredState.encode(state(randomUUID(), 9)).finish()).toString('base64');
      await bus.publish(desiredStateSubject(hub), foreign);
      await publishDesiredState(bus, state(hub, 3));
      await eventually(async () => applied.includes(3), 5_000);
      expect(applied).toEqual([2, 3]);
    } finally {
      await stop();
      await bus.close();
    }
  });

  it('names the subject after a lower-case hub UID only', () => {
    const hub = randomUUID();
    expect(desiredStateSubject(hub)).toBe(`agent-desired.v1.${hub}.desired-state`);
    expect(() => desiredStateSubject(hub.toUpperCase())).toThrow(/lower-case UUID/);
  });
});
