import { DecisionCache, TUPLES_CHANGED } from '@platform/bus';
import { LaterBus } from '@platform/testing';
import type { authzV1 } from '@platform/proto';
import { withKeptDecisions } from './clients';

/** authz as the gateway sees it: answers from a set of held permissions, counting the calls. */
function authz() {
  const held = new Set<string>();
  const calls = { n: 0 };
  const client = {
    calls,
    held,
    checkPermission: async (req: authzV1.CheckPermissionRequest) => (
      calls.n++,
      { allowed: held.has(`${req.userId} ${req.permission} ${req.objectId}`) }
    ),
    check: async (req: authzV1.CheckRequest) => (
      calls.n++,
      { allowed: held.has(`${req.tuple!.user} ${req.tuple!.relation} ${req.tuple!.object}`) }
    ),
    permissionCatalog: async () => ({ permissions: [] }),
  };
  return client;
}

async function setUp() {
  const bus = new LaterBus();
  const cache = new DecisionCache({ ttlMs: 60_000, maxEntries: 1000 });
  const stop = await cache.followTuples(bus);
  const backend = authz();
  return { bus, stop, backend, client: withKeptDecisions(backend, cache) };
}

describe("the decisions authz's readers keep", () => {
  it('asks authz once for a check asked again, and again once a tuple changed, even when the notice arrives late', async () => {
    const { bus, stop, backend, client } = await setUp();
    backend.held.add('1 edit:org 7');
    const ask = () => client.checkPermission({ userId: 1, permission: 'edit:org', objectId: 7 });
    expect((await ask()).allowed).toBe(true);
    expect((await ask()).allowed).toBe(true);
    expect(backend.calls.n).toBe(1);
    // The membership goes; authz's notice is sent but not yet delivered when the next request arrives.
    backend.held.delete('1 edit:org 7');
    await bus.notify(TUPLES_CHANGED, {});
    expect((await ask()).allowed).toBe(false);
    expect(backend.calls.n).toBe(2);
    // Another object or permission is another question.
    await client.checkPermission({ userId: 1, permission: 'edit:org', objectId: 8 });
    await client.checkPermission({ userId: 1, permission: 'delete:org', objectId: 7 });
    expect(backend.calls.n).toBe(4);
    await stop();
  });

  it('keeps relation checks too, but always asks one with contextual tuples or a context', async () => {
    const { stop, backend, client } = await setUp();
    backend.held.add('user:1 owner organization:7');
    const tuple = { user: 'user:1', relation: 'owner', object: 'organization:7' };
    await client.check({ tuple, contextualTuples: [] });
    await client.check({ tuple, contextualTuples: [] });
    expect(backend.calls.n).toBe(1);
    const contextual = [{ user: 'organization:7', relation: 'owner', object: 'contract:3' }];
    await client.check({ tuple, contextualTuples: contextual });
    await client.check({ tuple, contextualTuples: contextual });
    expect(backend.calls.n).toBe(3);
    // A condition context (the time a grant is asked about, say) is part of that one question too.
    const context = JSON.stringify({ current_time: '2026-01-01T00:00:00Z' });
    await client.check({ tuple, contextualTuples: [], contextJson: context });
    await client.check({ tuple, contextualTuples: [], contextJson: context });
    expect(backend.calls.n).toBe(5);
    await stop();
  });

  it('leaves the client’s other methods as they are', async () => {
    const { stop, client } = await setUp();
    expect(await client.permissionCatalog()).toEqual({ permissions: [] });
    await stop();
  });
});
