import { ConflictError, NotFoundError, UnavailableError } from '@platform/errors';
import { createCallContext, createLogger } from '@platform/service-kit';
import type { Identity } from './identity';
import { ensureSiteAdmin } from './site-admin';

// The bootstrap's answer when another replica took the admin's name first: the decision alone, with the identity
// store and authz faked, so each order of the two replicas' steps is asked for exactly.
describe('ensureSiteAdmin when the name was taken meanwhile', () => {
  const ctx = createCallContext(createLogger('site-admin-test', 'silent'));
  const settings = { username: 'admin', email: 'admin@example.com', password: 'correct horse battery' };
  const writes: string[] = [];
  const relationships = { write: async (w: { user: string }[]) => void writes.push(...w.map((t) => t.user)) };
  /** An identity store whose create finds the name taken, with `admins` site admins and `taken` telling whether a user still holds the name. */
  const identity = (admins: number[], taken: boolean) =>
    ({
      siteAdminIds: async () => admins,
      createUser: async () => {
        throw new ConflictError('user admin or email admin@example.com already exists');
      },
      getUser: async () => {
        if (!taken) throw new NotFoundError('user admin does not exist');
        return { id: 7, login: 'admin' };
      },
    }) as unknown as Identity;

  beforeEach(() => (writes.length = 0));

  it("carries on with the other replica's admin when it is there", async () => {
    let calls = 0;
    const store = identity([], true);
    // No admin at the first look, the other replica's at the second.
    (store as { siteAdminIds: () => Promise<number[]> }).siteAdminIds = async () => (calls++ === 0 ? [] : [7]);
    await expect(ensureSiteAdmin(store, relationships, settings, ctx)).resolves.toBeUndefined();
    expect(writes).toEqual(['user:7']);
  });

  it('retries (unavailable) when the other replica gave the name back: its grant failed and it removed its user', async () => {
    await expect(ensureSiteAdmin(identity([], false), relationships, settings, ctx)).rejects.toBeInstanceOf(UnavailableError);
  });

  it('stops with the conflict when a user who is no site admin holds the name', async () => {
    await expect(ensureSiteAdmin(identity([], true), relationships, settings, ctx)).rejects.toBeInstanceOf(ConflictError);
  });
});

// The bootstrap's own admin when authz is not up yet: kept for the retry, never removed (another replica starting
// beside it may already have found it and made the administrative organization with it as owner).
describe('ensureSiteAdmin while authz is not up', () => {
  const ctx = createCallContext(createLogger('site-admin-test', 'silent'));
  const settings = { username: 'admin', email: 'admin@example.com', password: 'correct horse battery' };

  it('keeps the admin it created when the grant fails, and grants it on the retry', async () => {
    const admins: number[] = [];
    const removed: number[] = [];
    const identity = {
      siteAdminIds: async () => [...admins],
      createUser: async () => {
        admins.push(7);
        return { id: 7, login: 'admin' };
      },
      deleteAccount: async (id: number) => void removed.push(id),
      passwordMatches: async () => true,
    } as unknown as Identity;
    let authzUp = false;
    const granted: string[] = [];
    const relationships = {
      write: async (w: { user: string }[]) => {
        if (!authzUp) throw new UnavailableError('authz is down');
        granted.push(...w.map((t) => t.user));
      },
    };
    await expect(ensureSiteAdmin(identity, relationships, settings, ctx)).rejects.toBeInstanceOf(UnavailableError);
    expect({ admins, removed }).toEqual({ admins: [7], removed: [] });
    authzUp = true;
    await expect(ensureSiteAdmin(identity, relationships, settings, ctx)).resolves.toBeUndefined();
    expect(granted).toEqual(['user:7']);
  });
});
