import { InProcessBus, TUPLES_CHANGED, type TuplesChanged } from '@platform/bus';
import { authzV1 } from '@platform/proto';
import { announcingWrites, createLogger, type ServiceBinding } from '@platform/service-kit';
import type { AllowedPermissions } from './roles/allowed-permissions';
import type { Authorization } from './authorization';
import type { Roles } from './roles/roles';
import { ROLES_READS, rolesService } from './roles/service';
import { AUTHZ_READS, authzService } from './service';
import type { Tuple } from './engine';
import { recordingWrites, wrote } from './engine/recorded';
import { MAX_NAMED_TAGS, noticeOf, recordingTupleWrites, tuplesChangedNotice } from './tuples-changed';

// authz's writes announce themselves by method, as its app binds its services: every method not listed as a read that
// wrote tuples (or a role's row) sends TUPLES_CHANGED once it is over, answered or failed, before its caller hears back
// (waiting a bounded time for a slow NATS, not at all for an absent one), naming what it touched; a read sends nothing.

const log = createLogger('authz', 'silent');

/**
 * Answers every question with nothing (an empty list), and writes by recording what it is asked to write, as the engine
 * does: the methods run, or fail, without a database.
 */
const answeringNothing = <T>(): T =>
  new Proxy(
    {},
    {
      get: (_target, name) =>
        name === 'catalog'
          ? () => []
          : name === 'write'
            ? async (writes: Tuple[], deletes: Tuple[]) => (wrote(writes), wrote(deletes))
            : async () => [],
    },
  ) as T;

/** The tuples as stored, for the organizations of the objects a notice names. */
const stored = (tuples: Tuple[]) => ({
  readTuples: async (filter: { object?: string; relation?: string }) =>
    tuples.filter((t) => t.object === filter.object && (!filter.relation || t.relation === filter.relation)),
});

/** The bus the notices go to, counting them. */
async function counted() {
  const bus = new InProcessBus();
  const heard = { n: 0, last: undefined as TuplesChanged | undefined };
  await bus.listen(TUPLES_CHANGED, (_subject, payload) => void (heard.n++, (heard.last = payload as TuplesChanged)));
  return { bus, heard };
}

const aTuple = { user: 'user:3', relation: 'member', object: 'team:12' };
/** Runs the notice of a call that wrote `tuples`, as a write method's binding does. */
const afterWriting = (tuples: Tuple[], notice: (call: never) => Promise<void>) =>
  recordingWrites(async () => (wrote(tuples), notice({ method: 'writeTuples', request: {}, response: {} } as never)));

/** Calls every method of the binding once with its empty request, and answers those that sent a notice. */
async function announcers(binding: ServiceBinding<any>, heard: { n: number }): Promise<string[]> {
  const found: string[] = [];
  for (const [name, method] of Object.entries(binding.definition as Record<string, { requestDeserialize(b: Buffer): unknown }>)) {
    const before = heard.n;
    const handle = binding.handlers[name] as (request: unknown, ctx: never) => Promise<unknown>;
    await handle(method.requestDeserialize(Buffer.alloc(0)), {} as never).catch(() => undefined);
    if (heard.n > before) found.push(name);
  }
  return found;
}

describe("authz's writes, announced by method", () => {
  afterEach(() => jest.useRealTimers());

  it('announces WriteTuples and the roles writes that change a role, a refused change too, naming what they touched; no read', async () => {
    const { bus, heard } = await counted();
    const announce = tuplesChangedNotice(bus, log, stored([{ user: 'organization:7', relation: 'organization', object: 'team:12' }]));
    const authz = recordingTupleWrites(
      announcingWrites(
        authzService(answeringNothing<Authorization>(), authzV1.DescribeStoreResponse.fromPartial({})),
        AUTHZ_READS,
        announce,
      ),
    );
    const roles = recordingTupleWrites(
      announcingWrites(rolesService(answeringNothing<Roles>(), answeringNothing<AllowedPermissions>()), ROLES_READS, announce),
    );
    // An empty request writes nothing, so it says nothing; a read never does.
    expect(await announcers(authz, heard)).toEqual([]);
    const write = authz.handlers.writeTuples as (request: unknown, ctx: never) => Promise<unknown>;
    await write({ writes: [aTuple], deletes: [] }, {} as never);
    expect(heard.last).toEqual({ tags: ['team:12', 'team:12#member', 'team:*', '@user:3'], relations: true, orgs: [7] });
    // A role created, renamed or deleted is named as its organization's, even when the change fails (nothing is stored here).
    expect(await announcers(roles, heard)).toEqual(['createRole', 'updateRole', 'deleteRole']);
    expect(heard.last).toEqual({ tags: ['role:0', 'role:0#organization', 'role:*', '@organization:0'], relations: true, orgs: [0] });
  });

  it('lets the caller hear of a write only once NATS has its notice, and at most after the bounded wait', async () => {
    const bus = new InProcessBus();
    let taken: (() => void) | undefined;
    bus.notify = () => new Promise<void>((resolve) => (taken = resolve));
    let over = false;
    const tuples = stored([{ user: 'organization:7', relation: 'organization', object: 'team:12' }]);
    const announced = afterWriting([aTuple], tuplesChangedNotice(bus, log, tuples, 60_000)).then(() => (over = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(over).toBe(false);
    taken!();
    await announced;
    // NATS slow to take it: answered after the wait all the same (on fake time: when the 50 ms have passed, not before).
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    let late = false;
    const waited = afterWriting([aTuple], tuplesChangedNotice(bus, log, tuples, 50)).then(() => (late = true));
    await jest.advanceTimersByTimeAsync(49);
    expect(late).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(late).toBe(true);
    await waited;
    jest.useRealTimers();
  });

  it('does not hold a write up while the bus is disconnected: the notice goes once it is back', async () => {
    const bus = new InProcessBus();
    const sent: string[] = [];
    bus.health = () => ({ connected: false, since: new Date() });
    bus.notify = (subject) => (sent.push(subject), new Promise<void>(() => {}));
    await afterWriting([aTuple], tuplesChangedNotice(bus, log, stored([]), 60_000));
    expect(sent).toEqual([TUPLES_CHANGED]);
  });
});

describe('what a tuple notice names', () => {
  const orgOf = (object: string, org: number): Tuple => ({ user: `organization:${org}`, relation: 'organization', object });

  it('names each tuple’s object, type and user, and the organizations of the objects, from the write or the tuples', async () => {
    const tuples = [
      // A team created with its parent, a member added to it, and a role of another organization granted there.
      orgOf('team:5', 2),
      { user: 'user:9', relation: 'member', object: 'team:5' },
      { user: 'team:5#member', relation: 'assignee', object: 'role:8' },
    ];
    const notice = await noticeOf(tuples, stored([orgOf('role:8', 3)]));
    expect(notice.tags).toEqual(expect.arrayContaining(['team:5', 'team:*', '@organization:2', '@user:9', 'role:8', 'role:*', '@team:5']));
    expect(notice.orgs?.sort()).toEqual([2, 3]);
    expect(notice.all).toBeUndefined();
  });

  it('names the organization of a tuple’s user too: a role granted to a team changes what is kept of that team', async () => {
    // The team's roles are kept by the team's organization (the teams list shows them), whichever organization the
    // role is of.
    const grant = { user: 'team:5#member', relation: 'assignee', object: 'role:8' };
    const notice = await noticeOf([grant], stored([orgOf('team:5', 2), orgOf('role:8', 3)]));
    expect(notice.orgs?.sort()).toEqual([2, 3]);
  });

  it('reads a parent from the tuples in memory when the engine holds them all, and from the table only when it does not', async () => {
    const asked: string[] = [];
    const table = stored([orgOf('team:5', 2)]);
    const reader = (memory: Record<string, string[]> | undefined) => ({
      readTuples: async (filter: { object?: string; relation?: string }) => {
        asked.push(`table ${filter.object}`);
        return table.readTuples(filter);
      },
      keptUsers: async (object: string, relation: string) => (memory ? (memory[`${object}#${relation}`] ?? []) : undefined),
    });
    const member = { user: 'user:9', relation: 'member', object: 'team:5' };
    expect((await noticeOf([member], reader({ 'team:5#organization': ['organization:2'] }))).orgs).toEqual([2]);
    expect(asked).toEqual([]);
    expect((await noticeOf([member], reader(undefined))).orgs).toEqual([2]);
    expect(asked).toEqual(['table team:5']);
  });

  it('names the owner organization of a cluster, and none for a user’s cluster', async () => {
    const owned = stored([
      { user: 'organization:4', relation: 'owner', object: 'cluster:a' },
      { user: 'user:6', relation: 'owner', object: 'cluster:b' },
    ]);
    expect((await noticeOf([{ user: 'user:1', relation: 'view', object: 'cluster:a' }], owned)).orgs).toEqual([4]);
    expect((await noticeOf([{ user: 'user:1', relation: 'view', object: 'cluster:b' }], owned)).orgs).toEqual([]);
  });

  it('names only the organization when the site is the user of a tuple (every organization has the site)', async () => {
    expect(await noticeOf([{ user: 'site:platform', relation: 'site', object: 'organization:7' }], stored([]))).toEqual({
      tags: ['organization:7', 'organization:7#site', 'organization:*', '@site:platform'],
      relations: true,
      orgs: [7],
    });
  });

  it('names everything for a change of the site’s admins, a team of no known organization, or a write too large to list', async () => {
    expect(await noticeOf([{ user: 'user:1', relation: 'admin', object: 'site:platform' }], stored([]))).toEqual({ all: true });
    expect(await noticeOf([aTuple], stored([]))).toEqual({ all: true });
    const many = Array.from({ length: MAX_NAMED_TAGS }, (_, i) => ({ user: `user:${i}`, relation: 'member', object: 'organization:1' }));
    expect(await noticeOf(many, stored([]))).toEqual({ all: true });
  });
});
