import { TUPLES_CHANGED } from '@platform/bus';
import type { authzRolesV1 } from '@platform/proto';
import { LaterBus } from '@platform/bus/testing';
import { keptAuthz } from './clients';

// The custom roles authz's readers keep: one call for a role read again, none once kept, and the very next read after
// a tuple notice naming the role (a rename too sends it) asks again, even when the notice reaches the reader late.

function roles() {
  const stored = new Map<string, authzRolesV1.Role>();
  const calls = { n: 0 };
  const getRole = async (req: authzRolesV1.GetRoleRequest) => {
    calls.n++;
    const role = stored.get(`${req.orgId}|${req.id}`);
    if (!role) throw new Error('role does not exist');
    return role;
  };
  return { stored, calls, getRole };
}

const role = (name: string) => ({ id: 5, name, description: '' }) as unknown as authzRolesV1.Role;

describe("the custom roles authz's readers keep", () => {
  it('reads a role once, and again at once after a tuple change announced late', async () => {
    const backend = roles();
    const { clients, readModel } = keptAuthz(
      {
        authz: {
          check: async () => ({ allowed: false, dependsOn: [] }),
          checkPermission: async () => ({ allowed: false, dependsOn: [] }),
          whoHasAccess: async () => ({ permissions: [], dependsOn: [] }),
        },
        roles: backend,
      },
      { reader: 'test', decisions: { ttlMs: 60_000, maxEntries: 100 }, roles: { ttlMs: 60_000 } },
    );
    const bus = new LaterBus();
    const stop = await readModel.follow(bus);
    backend.stored.set('1|5', role('Editors'));
    expect((await clients.roles.getRole({ orgId: 1, id: 5 })).name).toBe('Editors');
    expect((await clients.roles.getRole({ orgId: 1, id: 5 })).name).toBe('Editors');
    expect(backend.calls.n).toBe(1);
    // Renamed by another replica of authz, which answered once its notice was sent; it has not arrived here yet.
    backend.stored.set('1|5', role('Writers'));
    // Another role's rename leaves it kept; its own is named as its parent tuple would be.
    await bus.notify(TUPLES_CHANGED, { tags: ['role:6', 'role:*', '@organization:1'], orgs: [1] });
    expect((await clients.roles.getRole({ orgId: 1, id: 5 })).name).toBe('Editors');
    await bus.notify(TUPLES_CHANGED, { tags: ['role:5', 'role:*', '@organization:1'], orgs: [1] });
    expect((await clients.roles.getRole({ orgId: 1, id: 5 })).name).toBe('Writers');
    expect(backend.calls.n).toBe(2);
    backend.stored.set('1|5', role('Authors'));
    await bus.notify(TUPLES_CHANGED, {});
    expect((await clients.roles.getRole({ orgId: 1, id: 5 })).name).toBe('Authors');
    expect(backend.calls.n).toBe(3);
    // A role of another organization is another question, and a missing one is not kept.
    await expect(clients.roles.getRole({ orgId: 2, id: 5 })).rejects.toThrow('does not exist');
    await expect(clients.roles.getRole({ orgId: 2, id: 5 })).rejects.toThrow('does not exist');
    expect(backend.calls.n).toBe(5);
    await stop();
  });
});
