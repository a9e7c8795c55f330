import { TUPLES_CHANGED } from '@platform/bus';
import { authzV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptAuthz } from './clients';

// Who-has-access answers as authz's readers keep them: one call for an object looked at again, the very next look after
// any tuple change asks again (even while the notice is on its way), and an answer showing a time-bound grant is kept
// no longer than the grant.

/** authz's who-has-access as a reader sees it: the answer it holds per object, counting the calls. */
function authz() {
  const answers = new Map<string, authzV1.WhoHasAccessResponse>();
  const asked: string[] = [];
  const none = async () => ({ allowed: false, dependsOn: [] });
  return {
    answers,
    asked,
    check: none,
    checkPermission: none,
    whoHasAccess: async (req: authzV1.WhoHasAccessRequest) => (asked.push(req.object), answers.get(req.object)!),
  };
}

const holders = (...paths: { userId: number; until?: string }[]) =>
  authzV1.WhoHasAccessResponse.fromPartial({
    // As authz says it read them: the organization and the team of its owners.
    dependsOn: ['organization:7', 'team:70'],
    permissions: [
      {
        permission: 'edit:org',
        relation: 'edit',
        users: paths.map(({ userId, until }) => ({ userId, paths: [{ kind: until ? 'role' : 'owner', until: until ?? '' }] })),
      },
    ],
  });

async function setUp() {
  const backend = authz();
  const roles = { getRole: async () => Promise.reject(new Error('no roles here')) };
  const { clients, readModel } = keptAuthz(
    { authz: backend, roles },
    { reader: 'test', decisions: { ttlMs: 60_000, maxEntries: 10_000 }, roles: { ttlMs: 60_000 } },
  );
  const bus = new LaterBus();
  const stop = await readModel.follow(bus);
  return { backend, client: clients.authz, bus, stop };
}

describe("the who-has-access answers authz's readers keep", () => {
  afterEach(() => jest.useRealTimers());

  it('asks once for an object looked at again, and again at once after a tuple change announced late', async () => {
    const { backend, client, bus, stop } = await setUp();
    backend.answers.set('organization:7', holders({ userId: 2 }));
    expect(await client.whoHasAccess({ object: 'organization:7' })).toEqual(holders({ userId: 2 }));
    expect(await client.whoHasAccess({ object: 'organization:7' })).toEqual(holders({ userId: 2 }));
    expect(backend.asked).toEqual(['organization:7']);
    // A member added through authz, whose notice has not arrived when the next look comes.
    backend.answers.set('organization:7', holders({ userId: 2 }, { userId: 9 }));
    await bus.notify(TUPLES_CHANGED, {});
    expect(await client.whoHasAccess({ object: 'organization:7' })).toEqual(holders({ userId: 2 }, { userId: 9 }));
    expect(backend.asked).toEqual(['organization:7', 'organization:7']);
    await stop();
  });

  it('drops an answer when a write touches what it was read from, and only then', async () => {
    const { backend, client, bus, stop } = await setUp();
    backend.answers.set('organization:7', holders({ userId: 2 }));
    await client.whoHasAccess({ object: 'organization:7' });
    // A member joins a team of another organization: not read here.
    await bus.notify(TUPLES_CHANGED, { tags: ['team:80', 'team:*', '@user:9'], orgs: [8] });
    await client.whoHasAccess({ object: 'organization:7' });
    expect(backend.asked).toEqual(['organization:7']);
    // A member joins organization 7's owners team.
    backend.answers.set('organization:7', holders({ userId: 2 }, { userId: 9 }));
    await bus.notify(TUPLES_CHANGED, { tags: ['team:70', 'team:*', '@user:9'], orgs: [7] });
    expect(await client.whoHasAccess({ object: 'organization:7' })).toEqual(holders({ userId: 2 }, { userId: 9 }));
    expect(backend.asked).toEqual(['organization:7', 'organization:7']);
    await stop();
  });

  it('keeps an answer showing a time-bound grant no longer than the grant', async () => {
    // On fake time (Date for the grant's end, performance.now() for the cache's own lifetime: both jest's), a moment
    // in, since the cache takes an answer stamped at 0 for one stamped never.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    jest.advanceTimersByTime(1);
    const { backend, client, stop } = await setUp();
    const until = new Date(Date.now() + 300).toISOString();
    backend.answers.set('organization:7', holders({ userId: 2 }, { userId: 5, until }));
    await client.whoHasAccess({ object: 'organization:7' });
    await jest.advanceTimersByTimeAsync(299);
    await client.whoHasAccess({ object: 'organization:7' });
    expect(backend.asked).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(2);
    // Ended: authz no longer shows it, and the kept answer that did is not served.
    backend.answers.set('organization:7', holders({ userId: 2 }));
    expect(await client.whoHasAccess({ object: 'organization:7' })).toEqual(holders({ userId: 2 }));
    expect(backend.asked).toHaveLength(2);
    await stop();
  });
});
