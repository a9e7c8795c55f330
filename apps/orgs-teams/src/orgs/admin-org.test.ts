import { NotFoundError, UnavailableError } from '@platform/errors';
import { createCallContext, createLogger } from '@platform/service-kit';
import type { Identity } from '../identity/identity';
import { ensureAdminOrg } from './admin-org';
import type { Organizations } from './organizations';

// The administrative organization's bootstrap, with the identity store and the organizations faked: two replicas
// starting on a fresh database can leave this one with no site admin for a moment (the other replica's admin, found
// here, was given back when its grant failed), and the organization must then wait for one, never be made ownerless.
describe('ensureAdminOrg', () => {
  const ctx = createCallContext(createLogger('admin-org-test', 'silent'));
  const created: { creatorId: number; username: string }[] = [];
  const orgs = {
    get: async () => {
      throw new NotFoundError('organization platform-admin does not exist');
    },
    create: async (req: { creatorId: number; username: string }) => {
      created.push({ creatorId: req.creatorId, username: req.username });
      return { id: 3 };
    },
  } as unknown as Organizations;
  const identity = (admins: number[]) => ({ siteAdminIds: async () => admins }) as unknown as Identity;

  beforeEach(() => (created.length = 0));

  it('retries (unavailable) and creates nothing while there is no site admin', async () => {
    await expect(ensureAdminOrg(identity([]), orgs, 'platform-admin', ctx)).rejects.toBeInstanceOf(UnavailableError);
    expect(created).toEqual([]);
  });

  it('creates the organization owned by the first site admin', async () => {
    await ensureAdminOrg(identity([7, 9]), orgs, 'platform-admin', ctx);
    expect(created).toEqual([{ creatorId: 7, username: 'platform-admin' }]);
  });
});
