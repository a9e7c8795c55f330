import { keptServiceReads, TUPLES_CHANGED } from '@platform/bus';
import { LaterBus } from '@platform/bus/testing';
import { authzReads } from './clients';

// authz's other reads as a gateway keeps them: a role list asked again is answered from memory; a tuple write through
// another replica (its notice still on the way) is seen by the very next request; an answer that follows from the
// tuples lives no longer than a kept check, since a time-bound grant ends with no write.

function rolesApp() {
  const names = ['deployer'];
  const asked: string[] = [];
  return {
    names,
    asked,
    authz: {},
    roles: {
      listRoles: async (_q: { orgId: number }) => (asked.push('roles'), { roles: names.map((name) => ({ name })) }),
      createRole: async (_q: { name: string }) => (asked.push('create'), {}),
    },
  };
}

describe("authz's kept reads", () => {
  afterEach(() => jest.useRealTimers());

  it('answers a list of roles from memory until a tuple notice, and no longer than a check is kept', async () => {
    // On fake time (the cache counts lifetimes on performance.now(), jest's from here), a moment in, since the cache
    // takes an answer stamped at 0 for one stamped never.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    jest.advanceTimersByTime(1);
    const app = rolesApp();
    const { clients, readModel } = keptServiceReads(app, authzReads(200) as never, { name: 'test.authz', ttlMs: 60_000 });
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    expect((await clients.roles.listRoles({ orgId: 7 })).roles).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(200);
    await clients.roles.listRoles({ orgId: 7 });
    expect(app.asked).toEqual(['roles']);

    app.names.push('auditor');
    await bus.notify(TUPLES_CHANGED, {});
    expect((await clients.roles.listRoles({ orgId: 7 })).roles).toHaveLength(2);
    await clients.roles.createRole({ name: 'x' });
    await clients.roles.createRole({ name: 'x' });
    expect(app.asked).toEqual(['roles', 'roles', 'create', 'create']);

    // The list kept after the notice lives as long as a check (200 ms here), and no longer.
    await jest.advanceTimersByTimeAsync(200);
    await clients.roles.listRoles({ orgId: 7 });
    expect(app.asked.filter((a) => a === 'roles')).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    await clients.roles.listRoles({ orgId: 7 });
    expect(app.asked.filter((a) => a === 'roles')).toHaveLength(3);
    await stop();
  });

  it("drops an organization's role list on a tuple notice naming the organization, and keeps another's", async () => {
    const app = rolesApp();
    const { clients, readModel } = keptServiceReads(app, authzReads(60_000) as never, { name: 'test.authz', ttlMs: 60_000 });
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    await clients.roles.listRoles({ orgId: 7 });
    await bus.notify(TUPLES_CHANGED, { tags: ['role:80', 'role:*', '@organization:8'], orgs: [8] });
    await clients.roles.listRoles({ orgId: 7 });
    expect(app.asked).toEqual(['roles']);
    await bus.notify(TUPLES_CHANGED, { tags: ['role:70', 'role:*', '@organization:7'], orgs: [7] });
    await clients.roles.listRoles({ orgId: 7 });
    expect(app.asked).toEqual(['roles', 'roles']);
    // A change of the site's admins names everything.
    await bus.notify(TUPLES_CHANGED, { all: true });
    await clients.roles.listRoles({ orgId: 7 });
    expect(app.asked).toEqual(['roles', 'roles', 'roles']);
    await stop();
  });

  it('keeps whether a user may give a grant under what authz read for it: a member added elsewhere in the organization leaves it', async () => {
    const asked: number[] = [];
    // authz says what it read: the team's role assignments and the roles they carry (an older authz says nothing).
    const dependsOn: Record<number, string[]> = { 12: ['@team:12', 'role:5'], 13: [] };
    const app = {
      authz: {},
      roles: {
        checkGrant: async (q: { orgId: number; teamIds: number[] }) => (
          asked.push(q.teamIds[0]),
          { missing: [], dependsOn: dependsOn[q.teamIds[0]] }
        ),
      },
    };
    const { clients, readModel } = keptServiceReads(app, authzReads(60_000) as never, { name: 'test.authz', ttlMs: 60_000 });
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    const ask = (team: number) => clients.roles.checkGrant({ orgId: 7, teamIds: [team] });
    await ask(12);
    await ask(13);
    // A member joins team 14 of the same organization: team 12's answer read nothing of it; team 13's is kept by organization.
    await bus.notify(TUPLES_CHANGED, { tags: ['team:14', 'team:14#member', 'team:*', '@user:3'], relations: true, orgs: [7] });
    await ask(12);
    await ask(13);
    expect(asked).toEqual([12, 13, 13]);
    // Role 5's permissions change: gone.
    await bus.notify(TUPLES_CHANGED, { tags: ['role:5', 'role:5#organization', 'role:*', '@organization:7'], relations: true, orgs: [7] });
    await ask(12);
    expect(asked).toEqual([12, 13, 13, 12]);
    await stop();
  });
});
