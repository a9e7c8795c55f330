import { DecisionCache, TUPLES_CHANGED, type Bus } from '@platform/bus';
import { authzV1 } from '@platform/proto';
import { announcingWrites, type ServiceBinding } from '@platform/service-kit';
import { LaterBus } from '@platform/bus/testing';
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
      { allowed: held.has(`${req.userId} ${req.permission} ${req.objectId}`), dependsOn: [] }
    ),
    check: async (req: authzV1.CheckRequest) => (
      calls.n++,
      { allowed: held.has(`${req.tuple!.user} ${req.tuple!.relation} ${req.tuple!.object}`), dependsOn: [] }
    ),
    permissionCatalog: async () => ({ permissions: [] }),
  };
  return client;
}

async function setUp() {
  const bus = new LaterBus();
  const cache = new DecisionCache<authzV1.CheckResponse>({ ttlMs: 60_000, maxEntries: 1000 });
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
    const { stop, backend } = await setUp();
    const cache = new DecisionCache<authzV1.CheckResponse>({ ttlMs: 60_000, maxEntries: 1000 });
    expect(await withKeptDecisions(backend, cache).permissionCatalog()).toEqual({ permissions: [] });
    await stop();
  });

  it('drops exactly the answers read from what a write touched; an answer about another organization stays kept', async () => {
    const bus = new LaterBus();
    const cache = new DecisionCache<authzV1.CheckResponse>({ ttlMs: 60_000, maxEntries: 1000 });
    const stop = await cache.followTuples(bus);
    const asked: string[] = [];
    // authz answers with what it read: the organization, the site, and the team of organization 7's owners.
    const reads: Record<string, string[]> = {
      '7': ['organization:7', 'site:platform', 'team:70'],
      '8': ['organization:8', 'site:platform', 'team:80'],
    };
    const client = withKeptDecisions(
      {
        check: async () => ({ allowed: false, dependsOn: [] }),
        checkPermission: async (req: authzV1.CheckPermissionRequest) => (
          asked.push(String(req.objectId)),
          { allowed: true, dependsOn: reads[String(req.objectId)] }
        ),
      },
      cache,
    );
    const ask = (org: number) => client.checkPermission({ userId: 1, permission: 'edit:org', objectId: org });
    await ask(7);
    await ask(8);
    expect(asked).toEqual(['7', '8']);
    // A member joins organization 7's owners team: only what read that team goes.
    await bus.notify(TUPLES_CHANGED, { tags: ['team:70', 'team:*', '@user:2'], orgs: [7] });
    await ask(7);
    await ask(8);
    expect(asked).toEqual(['7', '8', '7']);
    // A change of the site's admins reaches every answer (each one read the site).
    await bus.notify(TUPLES_CHANGED, { tags: ['site:platform', 'site:*', '@user:2'], orgs: [] });
    await ask(7);
    await ask(8);
    expect(asked).toEqual(['7', '8', '7', '7', '8']);
    // An answer authz could not say the reads of (an OpenFGA server's) goes with any tuple notice.
    reads['9'] = [];
    await ask(9);
    await bus.notify(TUPLES_CHANGED, { tags: ['team:80', 'team:*', '@user:2'], orgs: [8] });
    await ask(9);
    await ask(7);
    expect(asked).toEqual(['7', '8', '7', '7', '8', '9', '9']);
    // A notice from an authz that does not name its writes drops everything.
    await bus.notify(TUPLES_CHANGED, {});
    await ask(7);
    expect(asked.at(-1)).toBe('7');
    expect(asked).toHaveLength(8);
    await stop();
  });

  it('keeps an answer read from one relation of a team through a write of another relation of it', async () => {
    const bus = new LaterBus();
    const cache = new DecisionCache<authzV1.CheckResponse>({ ttlMs: 60_000, maxEntries: 1000 });
    const stop = await cache.followTuples(bus);
    let calls = 0;
    // authz read the team's members (and says so relation by relation, with every relation's tag beside it).
    const dependsOn = ['organization:7#owner', 'organization:7#*', 'team:70#member', 'team:70#*'];
    const client = withKeptDecisions(
      {
        check: async () => ({ allowed: false, dependsOn: [] }),
        checkPermission: async (_req: authzV1.CheckPermissionRequest) => (calls++, { allowed: true, dependsOn }),
      },
      cache,
    );
    const ask = () => client.checkPermission({ userId: 1, permission: 'edit:org', objectId: 7 });
    await ask();
    // A maintainer of the team is named: the answer read no maintainer, and stays.
    await bus.notify(TUPLES_CHANGED, { tags: ['team:70', 'team:70#maintainer', 'team:*', '@user:2'], relations: true, orgs: [7] });
    await ask();
    expect(calls).toBe(1);
    // A member of it is: dropped.
    await bus.notify(TUPLES_CHANGED, { tags: ['team:70', 'team:70#member', 'team:*', '@user:2'], relations: true, orgs: [7] });
    await ask();
    expect(calls).toBe(2);
    // An authz that names objects alone (an older replica, during a rolling upgrade) drops it for any relation of the team.
    await bus.notify(TUPLES_CHANGED, { tags: ['team:70', 'team:*', '@user:2'], orgs: [7] });
    await ask();
    expect(calls).toBe(3);
    await stop();
  });

  it('forgets what it kept once a write through another replica of authz is answered, before the notice reaches it', async () => {
    const bus = new LaterBus();
    const tuples = new Set<string>();
    const [a, b] = [replica(tuples, bus), replica(tuples, bus)];
    const cache = new DecisionCache<authzV1.CheckResponse>({ ttlMs: 60_000, maxEntries: 1000 });
    const stop = await cache.followTuples(bus);
    // This reader asks replica a.
    const reader = withKeptDecisions(a, cache);
    const member = { user: 'user:1', relation: 'member', object: 'organization:7' };
    const ask = async () => (await reader.check({ tuple: member, contextualTuples: [] })).allowed;
    await b.writeTuples({ writes: [member], deletes: [], idempotent: false });
    expect([await ask(), await ask()]).toEqual([true, true]);
    expect(a.calls.n).toBe(1);
    // Taken away through replica b, which answers once its notice is on the bus (still on its way here).
    await b.writeTuples({ writes: [], deletes: [member], idempotent: false });
    expect(await ask()).toBe(false);
    expect(a.calls.n).toBe(2);
    // A read through b announces nothing: what this reader kept stays kept.
    await b.check({ tuple: member, contextualTuples: [] });
    expect(await ask()).toBe(false);
    expect(a.calls.n).toBe(2);
    // A write that failed is announced too: it may have been applied in part.
    tuples.add(tupleKey(member));
    b.failWrites = true;
    await expect(b.writeTuples({ writes: [member], deletes: [], idempotent: false })).rejects.toThrow('write failed');
    expect(await ask()).toBe(true);
    expect(a.calls.n).toBe(3);
    await stop();
  });
});

const tupleKey = (t: authzV1.TupleKey) => `${t.user} ${t.relation} ${t.object}`;

/**
 * One authz replica as its readers reach it: checks answered from the tuples every replica shares (one database), and
 * its write method announced by method on the bus every reader follows, as authz's app binds its services
 * (announcingWrites, every method but the reads; its notice awaited before the writer hears back).
 */
function replica(tuples: Set<string>, bus: Bus) {
  const calls = { n: 0 };
  const state = { failWrites: false };
  const served = {
    definition: authzV1.AuthzServiceService,
    handlers: {
      // Read from the object asked about alone, as authz says for a direct tuple.
      check: async (req: authzV1.CheckRequest) => (
        calls.n++,
        { allowed: tuples.has(tupleKey(req.tuple!)), dependsOn: [req.tuple!.object] }
      ),
      writeTuples: async (req: authzV1.WriteTuplesRequest) => {
        for (const t of req.deletes) tuples.delete(tupleKey(t));
        if (state.failWrites) throw new Error('write failed');
        for (const t of req.writes) tuples.add(tupleKey(t));
        return {};
      },
    },
  } as unknown as ServiceBinding<typeof authzV1.AuthzServiceService>;
  // Named as authz names a write: each tuple's object (its type and user too, which no answer here read).
  const { handlers } = announcingWrites(served, ['check'], ({ request }) =>
    bus.notify(TUPLES_CHANGED, {
      tags: [...(request as authzV1.WriteTuplesRequest).writes, ...(request as authzV1.WriteTuplesRequest).deletes].map((t) => t.object),
      orgs: [],
    }),
  );
  return {
    calls,
    set failWrites(fail: boolean) {
      state.failWrites = fail;
    },
    check: (req: authzV1.CheckRequest) => handlers.check(req, {} as never),
    checkPermission: async (): Promise<authzV1.CheckResponse> => ({ allowed: false, dependsOn: [] }),
    writeTuples: (req: authzV1.WriteTuplesRequest) => handlers.writeTuples(req, {} as never),
  };
}
